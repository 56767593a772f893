import { asJsonObject } from './json';

/** How a delivery ended. */
export type DeliveryResult =
  /** A webhook answered 2xx. */
  | 'delivered'
  /** No webhook can take it: permanent failures, or the retry window closed. */
  | 'dead'
  /** Its destination was disabled or deleted before it was sent. */
  | 'discarded';

/**
 * The value of a record on `sluice.deliveries.outcomes.v1` (JSON), published by the
 * dispatcher for deliveries somebody waits for (delete notifications), keyed like the
 * delivery (`destinationId:userKey`). At least once: a reader must tolerate duplicates.
 */
export interface DeliveryOutcome {
  /** The delivery's `sluice-message-id` header (for a delete, the notification's id). */
  readonly messageId: string;
  readonly sourceId: string;
  readonly destinationId: string;
  /** The call type, e.g. `delete`. */
  readonly type: string;
  readonly result: DeliveryResult;
  /** Why it is dead or discarded (a stable code); absent when delivered. */
  readonly reason?: string;
  /** The HTTP status of the last attempt, when there was a response. */
  readonly lastStatus?: number;
  /** Attempts made. */
  readonly attempts: number;
  /** When the outcome was reached, ISO 8601 UTC. */
  readonly at: string;
}

const RESULTS: ReadonlySet<string> = new Set<DeliveryResult>(['delivered', 'dead', 'discarded']);

/** Reads an outcome record's value; undefined when it is not one. */
export function parseDeliveryOutcome(value: Buffer | string | null): DeliveryOutcome | undefined {
  if (value === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString());
  } catch {
    return undefined;
  }
  const o = asJsonObject(parsed);
  if (!o) return undefined;
  const strings = ['messageId', 'sourceId', 'destinationId', 'type', 'at'] as const;
  if (strings.some((name) => typeof o[name] !== 'string')) return undefined;
  if (typeof o.result !== 'string' || !RESULTS.has(o.result)) return undefined;
  if (typeof o.attempts !== 'number') return undefined;
  if (o.reason !== undefined && typeof o.reason !== 'string') return undefined;
  if (o.lastStatus !== undefined && typeof o.lastStatus !== 'number') return undefined;
  return o as unknown as DeliveryOutcome;
}
