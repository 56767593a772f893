import {
  deliveryIdFor,
  DeliveryOutcome,
  DeliveryState,
  HEADER,
  outcomeDeliveryId,
} from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';

/** One attempt (or move without one) as the ledger's history keeps it. */
export interface LedgerHistoryEntry {
  readonly attempts: number;
  readonly at: string;
  readonly result: DeliveryState;
  readonly reason?: string;
  readonly lastStatus?: number;
  readonly nextAttemptAt?: string;
  readonly webhooks?: DeliveryOutcome['webhooks'];
  /** The batch request the attempt travelled in, for a batching destination. */
  readonly batchId?: string;
}

/** What names a delivery's row (its key: id and first attempt) and what it is of. */
export interface LedgerDelivery {
  readonly id: string;
  readonly firstAttemptAt: Date;
  readonly sourceId: string;
  readonly destinationId: string;
  readonly messageId: string;
  readonly callType: string;
  /** The call's userId and anonymousId, null when it had none (or came before they were kept). */
  readonly userId: string | null;
  readonly anonymousId: string | null;
  readonly updatedAt: Date;
}

/** A `delivery_ledger` row as the writer upserts it. */
export interface LedgerRow extends LedgerDelivery {
  readonly event: string | null;
  readonly state: DeliveryState;
  readonly reason: string | null;
  readonly lastStatus: number | null;
  readonly lastDetail: string | null;
  readonly lastLatencyMs: number | null;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly history: readonly LedgerHistoryEntry[];
  readonly replayOf: string | null;
}

/** Where a delivery's dead letter sits, read from the dead-letter topic itself. */
export interface DeadPointer extends LedgerDelivery {
  readonly partition: number;
  readonly offset: string;
  /** Why it died and its last status, from the dead letter's headers. */
  readonly reason: string | null;
  readonly lastStatus: number | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The row an outcome stands for; undefined when the outcome cannot be placed (no times, no id). */
export function ledgerRow(outcome: DeliveryOutcome): LedgerRow | undefined {
  const at = validDate(outcome.at);
  const firstAttemptAt = validDate(outcome.firstAttemptAt ?? outcome.at);
  const id = outcomeDeliveryId(outcome);
  if (!at || !firstAttemptAt || !UUID.test(id)) return undefined;
  // The webhook the detail and latency describe: a success, else the first failure.
  const shown = outcome.webhooks?.find((w) => w.kind === 'success') ?? outcome.webhooks?.[0];
  return {
    id,
    firstAttemptAt,
    sourceId: outcome.sourceId,
    destinationId: outcome.destinationId,
    messageId: outcome.messageId,
    callType: outcome.type,
    userId: outcome.userId ?? null,
    anonymousId: outcome.anonymousId ?? null,
    event: outcome.event ?? null,
    state: outcome.result,
    reason: outcome.reason ?? null,
    lastStatus: outcome.lastStatus ?? null,
    lastDetail: shown?.detail ?? (shown?.status === undefined ? null : `HTTP ${shown.status}`),
    lastLatencyMs: shown?.latencyMs ?? null,
    attempts: outcome.attempts,
    nextAttemptAt: validDate(outcome.nextAttemptAt) ?? null,
    updatedAt: at,
    history: [
      {
        attempts: outcome.attempts,
        at: outcome.at,
        result: outcome.result,
        reason: outcome.reason,
        lastStatus: outcome.lastStatus,
        nextAttemptAt: outcome.nextAttemptAt,
        webhooks: outcome.webhooks,
        batchId: outcome.batchId,
      },
    ],
    replayOf:
      outcome.replayOf !== undefined && UUID.test(outcome.replayOf) ? outcome.replayOf : null,
  };
}

/** The pointer a dead letter gives its ledger row; undefined for a record no row can name. */
export function deadPointer(record: IncomingRecord): DeadPointer | undefined {
  const destinationId = headerText(record, HEADER.destinationId);
  const messageId = headerText(record, HEADER.messageId);
  if (!destinationId || messageId === undefined) return undefined;
  const lastAttemptAt = Number(headerText(record, HEADER.lastAttemptAt));
  const firstAttemptAt = Number(headerText(record, HEADER.firstAttemptAt));
  const lastStatus = Number(headerText(record, HEADER.lastStatus) ?? NaN);
  const updatedAt =
    Number.isFinite(lastAttemptAt) && lastAttemptAt > 0 ? lastAttemptAt : record.timestamp;
  return {
    id: headerText(record, HEADER.deliveryId) ?? deliveryIdFor(destinationId, messageId),
    firstAttemptAt: new Date(
      Number.isFinite(firstAttemptAt) && firstAttemptAt > 0 ? firstAttemptAt : updatedAt,
    ),
    sourceId: headerText(record, HEADER.sourceId) ?? '',
    destinationId,
    messageId,
    callType: headerText(record, HEADER.callType) ?? '',
    userId: headerText(record, HEADER.userId) ?? null,
    anonymousId: headerText(record, HEADER.anonymousId) ?? null,
    partition: record.partition,
    offset: record.offset,
    updatedAt: new Date(updatedAt),
    reason: headerText(record, HEADER.reason) ?? null,
    lastStatus: Number.isInteger(lastStatus) ? lastStatus : null,
  };
}

/**
 * One row per delivery of a batch, in arrival order: a later outcome replaces the state and
 * adds its history entry (one statement cannot update a row twice). Outcomes of one delivery
 * share a Kafka key, so they arrive in order.
 */
export function foldRows(rows: readonly LedgerRow[]): LedgerRow[] {
  const byId = new Map<string, LedgerRow>();
  for (const row of rows) {
    const key = rowKey(row);
    const earlier = byId.get(key);
    if (earlier === undefined || !newer(row, earlier)) {
      if (earlier === undefined) byId.set(key, row);
      continue;
    }
    byId.set(key, { ...row, history: [...earlier.history, ...row.history] });
  }
  return [...byId.values()];
}

/** A row's primary key as one string (id and first attempt). */
export function rowKey(delivery: LedgerDelivery): string {
  return `${delivery.id}/${delivery.firstAttemptAt.getTime()}`;
}

/** The order the ledger keeps: more attempts, then a later outcome. */
export function newer(a: Pick<LedgerRow, 'attempts' | 'updatedAt'>, b: typeof a): boolean {
  return a.attempts > b.attempts || (a.attempts === b.attempts && a.updatedAt > b.updatedAt);
}

function validDate(iso: string | undefined): Date | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}
