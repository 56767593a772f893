import { deliveryIdFor } from './delivery-id';
import { asJsonObject } from './json';

/** How a delivery ended. */
export type DeliveryResult =
  /** A webhook answered 2xx. */
  | 'delivered'
  /** No webhook can take it: permanent failures, or the retry window closed. */
  | 'dead'
  /** Its destination was disabled or deleted before it was sent. */
  | 'discarded';

/** Where a delivery stands after an attempt: ended, or waiting on a retry tier. */
export type DeliveryState = DeliveryResult | 'retrying';

/** What one POST to one webhook came to, as the ledger shows it. */
export interface WebhookAttempt {
  readonly webhookId: string;
  readonly kind: 'success' | 'retryable' | 'permanent';
  /** The answer's HTTP status, when there was an answer. */
  readonly status?: number;
  /** A stable code (`http_5xx`, `timeout`, `tls_error`, ...); absent on success. */
  readonly reason?: string;
  /** What happened, for a person: `HTTP 503`, `certificate not verified (...)`. */
  readonly detail?: string;
  /** How long the request took, milliseconds. */
  readonly latencyMs: number;
  /** A failed answer's body: its start as text, at most the configured bytes. */
  readonly responseBody?: string;
  /** A failed request's headers; static header values and signatures masked. */
  readonly requestHeaders?: Readonly<Record<string, string>>;
}

/**
 * One outcome on `sluice.deliveries.outcomes.v1`: one per attempt of every delivery (and one
 * when a delivery ends or moves on without an attempt), published by the dispatcher. A delete
 * notification's outcome is a record of its own (a JSON object, keyed like the delivery), for
 * the deletion receipts; the others travel many to a record (a JSON array, header
 * `sluice-outcome-count`), which costs the dispatcher a fraction of a record each. Read by the
 * delivery ledger, whose upsert does not depend on their order. At least once: a reader must
 * tolerate duplicates.
 *
 * The calls of one batch request travel as batch outcomes in those arrays: an object with the
 * members its calls share (the destination, `at`, `webhooks`, `batchId`, and the source and
 * the state when every call has the same) and `calls`, an array of each call's own members
 * (`messageId`, `type`, ...). Each call's outcome is the shared members with its own, as if
 * it had travelled alone; the parse functions below expand them.
 *
 * On the wire the times (`at`, `firstAttemptAt`, `nextAttemptAt`) are epoch milliseconds,
 * which the dispatcher writes without formatting a date; ISO 8601 strings are read as well.
 * The parse functions below give them as ISO 8601 strings.
 */
export interface DeliveryOutcome {
  /**
   * The delivery's id when its record carried one (a replay's); otherwise it is
   * `deliveryIdFor(destinationId, messageId)`, which the reader derives (see
   * {@link outcomeDeliveryId}): stable over the attempts, and no hash on the dispatcher's path.
   */
  readonly deliveryId?: string;
  /** The delivery's `sluice-message-id` header (for a delete, the notification's id). */
  readonly messageId: string;
  readonly sourceId: string;
  readonly destinationId: string;
  /** The call type, e.g. `track` or `delete`. */
  readonly type: string;
  /** A track call's event, or a page's or screen's name, when it had one. */
  readonly event?: string;
  /** The call's userId, when it had one. */
  readonly userId?: string;
  /** The call's anonymousId, when it had one. */
  readonly anonymousId?: string;
  readonly result: DeliveryState;
  /** Why it is retrying, dead or discarded (a stable code); absent when delivered. */
  readonly reason?: string;
  /** The HTTP status of the last attempt, when there was a response. */
  readonly lastStatus?: number;
  /** Attempts made so far. */
  readonly attempts: number;
  /**
   * When the delivery's first attempt was made (or it was first taken, when none was), ISO
   * 8601 UTC. On the wire it is left out where it is `at`; the parse functions fill it in.
   */
  readonly firstAttemptAt?: string;
  /** When a retrying delivery's next attempt is due, ISO 8601 UTC. */
  readonly nextAttemptAt?: string;
  /** When the outcome was reached, ISO 8601 UTC. */
  readonly at: string;
  /** Each webhook's answer to this attempt; absent when no attempt was made. */
  readonly webhooks?: readonly WebhookAttempt[];
  /** The delivery this one replays, when it is a replay. */
  readonly replayOf?: string;
  /**
   * The batch request this attempt travelled in (a batching destination's; the receiver sees
   * it as `X-Sluice-Batch-Id`); absent for a call sent alone or moved without an attempt.
   */
  readonly batchId?: string;
}

const STATES: ReadonlySet<string> = new Set<DeliveryState>([
  'delivered',
  'dead',
  'discarded',
  'retrying',
]);

/** The times an outcome may carry as epoch ms. */
const TIMES = ['at', 'firstAttemptAt', 'nextAttemptAt'] as const;

/** The id of the delivery an outcome is of. */
export function outcomeDeliveryId(outcome: DeliveryOutcome): string {
  return outcome.deliveryId ?? deliveryIdFor(outcome.destinationId, outcome.messageId);
}

/** Reads an outcome record's value of one outcome; undefined when it is not one. */
export function parseDeliveryOutcome(value: Buffer | string | null): DeliveryOutcome | undefined {
  const parsed = parseJson(value);
  return parsed === undefined || Array.isArray(parsed) ? undefined : asOutcome(parsed);
}

/**
 * Reads an outcome record's value: one outcome (an object) or several (an array), a batch
 * outcome standing for each of its calls'. Undefined when it is neither; `invalid` counts the
 * entries (and batch outcomes' calls) that are not outcomes.
 */
export function parseDeliveryOutcomes(
  value: Buffer | string | null,
): { readonly outcomes: DeliveryOutcome[]; readonly invalid: number } | undefined {
  const parsed = parseJson(value);
  if (parsed === undefined) return undefined;
  const entries: unknown[] = (Array.isArray(parsed) ? parsed : [parsed]).flatMap(expandBatch);
  const outcomes = entries.map(asOutcome).filter((o) => o !== undefined);
  return { outcomes, invalid: entries.length - outcomes.length };
}

/** A batch outcome's calls, each as the shared members with its own; any other entry as it is. */
function expandBatch(entry: unknown): unknown[] {
  const batch = asJsonObject(entry);
  if (batch === undefined || !('calls' in batch)) return [entry];
  const { calls, ...shared } = batch;
  if (!Array.isArray(calls)) return [entry];
  return (calls as unknown[]).map((call) => {
    const own = asJsonObject(call);
    return own === undefined ? call : { ...shared, ...own };
  });
}

function parseJson(value: Buffer | string | null): unknown {
  if (value === null) return undefined;
  try {
    return JSON.parse(value.toString()) as unknown;
  } catch {
    return undefined;
  }
}

function asOutcome(value: unknown): DeliveryOutcome | undefined {
  const o = asJsonObject(value);
  if (!o) return undefined;
  for (const name of TIMES) {
    const time = o[name];
    if (typeof time !== 'number') continue;
    const date = new Date(time);
    // A time out of a date's range becomes absent: an outcome without `at` is refused.
    o[name] = Number.isNaN(date.getTime()) ? undefined : date.toISOString();
  }
  const strings = ['messageId', 'sourceId', 'destinationId', 'type', 'at'] as const;
  if (strings.some((name) => typeof o[name] !== 'string')) return undefined;
  o.firstAttemptAt ??= o.at;
  if (typeof o.result !== 'string' || !STATES.has(o.result)) return undefined;
  if (typeof o.attempts !== 'number') return undefined;
  const optionalStrings = [
    'deliveryId',
    'reason',
    'event',
    'userId',
    'anonymousId',
    'firstAttemptAt',
    'nextAttemptAt',
    'replayOf',
    'batchId',
  ];
  if (optionalStrings.some((name) => o[name] !== undefined && typeof o[name] !== 'string'))
    return undefined;
  if (o.lastStatus !== undefined && typeof o.lastStatus !== 'number') return undefined;
  if (o.webhooks !== undefined && !Array.isArray(o.webhooks)) return undefined;
  return o as unknown as DeliveryOutcome;
}
