/** Exponential backoff between reconnection attempts. */
export interface ReconnectBackoff {
  /** Delay before the first retry, in milliseconds. */
  readonly initialDelayMs: number;
  /** Largest delay, in milliseconds. */
  readonly maxDelayMs: number;
}

/** 250 ms, doubling, capped at 30 s. */
export const DEFAULT_RECONNECT_BACKOFF: ReconnectBackoff = {
  initialDelayMs: 250,
  maxDelayMs: 30_000,
};

/** Share of a delay that is randomized, so that many readers do not reconnect in step. */
const JITTER_RATIO = 0.2;

/**
 * Delay before retry number `attempt` (0 for the first): `initialDelayMs * 2^attempt`,
 * capped at `maxDelayMs`, minus up to 20% jitter. `random` returns a number in [0, 1).
 */
export function reconnectDelayMs(
  attempt: number,
  backoff: ReconnectBackoff,
  random: () => number,
): number {
  const exponent = Math.min(Math.max(attempt, 0), 30);
  const base = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** exponent);
  return Math.round(base * (1 - JITTER_RATIO * random()));
}
