import type { DeliveryState } from '@app/contracts';

/** A `delivery_ledger` row as the pg driver returns it (timestamptz as Date, bigint as text). */
export interface LedgerRecord {
  readonly id: string;
  readonly first_attempt_at: Date;
  readonly source_id: string;
  readonly destination_id: string;
  readonly message_id: string;
  readonly call_type: string;
  readonly event: string | null;
  readonly user_id: string | null;
  readonly anonymous_id: string | null;
  readonly state: DeliveryState;
  readonly reason: string | null;
  readonly last_status: number | null;
  readonly last_detail: string | null;
  readonly last_latency_ms: number | null;
  readonly attempts: number;
  readonly next_attempt_at: Date | null;
  readonly updated_at: Date;
  readonly dead_partition: number | null;
  readonly dead_offset: string | null;
  readonly replay_of: string | null;
  readonly replays: number;
  readonly last_replay_id: string | null;
  readonly history?: unknown[];
}

/** A delivery as the API shows it: times in ISO 8601, absent values null. */
export interface DeliveryView {
  readonly id: string;
  readonly sourceId: string;
  readonly destinationId: string;
  /** The destination's name now; null when it was deleted since. */
  readonly destinationName: string | null;
  readonly messageId: string;
  readonly type: string;
  readonly event: string | null;
  /** The call's userId and anonymousId; null when it had none or was recorded before they were kept. */
  readonly userId: string | null;
  readonly anonymousId: string | null;
  readonly outcome: DeliveryState;
  readonly reason: string | null;
  readonly lastStatus: number | null;
  readonly lastDetail: string | null;
  readonly lastLatencyMs: number | null;
  readonly attempts: number;
  readonly firstAttemptAt: string;
  readonly nextAttemptAt: string | null;
  readonly updatedAt: string;
  /** Where its dead letter sits on the dead-letter topic (offset as decimal text). */
  readonly deadLetter: { readonly partition: number; readonly offset: string } | null;
  /** The delivery this one replays. */
  readonly replayOf: string | null;
  /** Replays made of this delivery. */
  readonly replays: number;
  /** The delivery its latest replay made; null when never replayed. */
  readonly lastReplayId: string | null;
}

/** A delivery with its attempts, oldest first. */
export interface DeliveryDetailView extends DeliveryView {
  readonly history: unknown[];
}

/** The columns a view needs, for SELECT lists. */
export const VIEW_COLUMNS = [
  'id',
  'first_attempt_at',
  'source_id',
  'destination_id',
  'message_id',
  'call_type',
  'event',
  'user_id',
  'anonymous_id',
  'state',
  'reason',
  'last_status',
  'last_detail',
  'last_latency_ms',
  'attempts',
  'next_attempt_at',
  'updated_at',
  'dead_partition',
  'dead_offset',
  'replay_of',
  'replays',
  'last_replay_id',
]
  .map((column) => `"${column}"`)
  .join(', ');

/** Destination names by id, for the rows of one answer. */
export type DestinationNames = ReadonlyMap<string, string>;

export function deliveryView(r: LedgerRecord, names: DestinationNames): DeliveryView {
  return {
    id: r.id,
    sourceId: r.source_id,
    destinationId: r.destination_id,
    destinationName: names.get(r.destination_id) ?? null,
    messageId: r.message_id,
    type: r.call_type,
    event: r.event,
    userId: r.user_id,
    anonymousId: r.anonymous_id,
    outcome: r.state,
    reason: r.reason,
    lastStatus: r.last_status,
    lastDetail: r.last_detail,
    lastLatencyMs: r.last_latency_ms,
    attempts: r.attempts,
    firstAttemptAt: r.first_attempt_at.toISOString(),
    nextAttemptAt: r.next_attempt_at?.toISOString() ?? null,
    updatedAt: r.updated_at.toISOString(),
    deadLetter:
      r.dead_partition === null || r.dead_offset === null
        ? null
        : { partition: r.dead_partition, offset: String(r.dead_offset) },
    replayOf: r.replay_of,
    replays: r.replays,
    lastReplayId: r.last_replay_id,
  };
}

export function deliveryDetailView(r: LedgerRecord, names: DestinationNames): DeliveryDetailView {
  return { ...deliveryView(r, names), history: r.history ?? [] };
}

/** A `replay_job` row as the pg driver returns it. */
export interface ReplayJobRecord {
  readonly id: string;
  readonly destination_id: string;
  readonly status: ReplayJobStatus;
  readonly total: number;
  readonly replayed: number;
  readonly failed: number;
  readonly error: string | null;
  readonly created_at: Date;
  readonly finished_at: Date | null;
}

export type ReplayJobStatus = 'running' | 'finished' | 'failed';

/** A bulk replay as the API shows it: how far it got. */
export interface ReplayJobView {
  readonly id: string;
  readonly destinationId: string;
  readonly status: ReplayJobStatus;
  /** Dead letters the job covers. */
  readonly total: number;
  /** Re-produced to the deliveries topic (acknowledged by Kafka). */
  readonly replayed: number;
  /** Not replayed: the dead letter is no longer on its topic (retention). */
  readonly failed: number;
  readonly error: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

export function replayJobView(r: ReplayJobRecord): ReplayJobView {
  return {
    id: r.id,
    destinationId: r.destination_id,
    status: r.status,
    total: r.total,
    replayed: r.replayed,
    failed: r.failed,
    error: r.error,
    createdAt: r.created_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}
