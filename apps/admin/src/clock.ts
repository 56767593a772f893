import { randomUUID } from 'node:crypto';

/** Time and ids, injected so that tests can fix them (never read from globals in logic). */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** A new random UUID (message and notification ids). */
  newId(): string;
}

/** Injection token of the {@link Clock}. */
export const CLOCK = Symbol('CLOCK');

/** The real clock. */
export const SYSTEM_CLOCK: Clock = { now: Date.now, newId: randomUUID };
