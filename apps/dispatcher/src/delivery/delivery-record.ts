import { DeliveryOutcome, DeliveryResult, HEADER, retryTopic, TOPIC } from '@app/contracts';
import { copyHeaders, headerText, IncomingRecord, OutgoingRecord } from '@app/kafka';

/** A delivery's facts, read from its headers: the body is never parsed. */
export interface DeliveryFacts {
  readonly destinationId: string;
  readonly sourceId: string | undefined;
  readonly type: string | undefined;
  readonly messageId: string | undefined;
  /** The attempt about to be made, 1 for the first. */
  readonly attempt: number;
  /** Epoch ms of the first attempt; undefined before it. */
  readonly firstAttemptAt: number | undefined;
  /** The webhooks a retry still covers; undefined means every current webhook. */
  readonly webhookIds: readonly string[] | undefined;
}

/** A delivery record decoded, or why it cannot be handled. */
export type DecodedDelivery =
  | { readonly kind: 'delivery'; readonly facts: DeliveryFacts; readonly body: Buffer }
  | { readonly kind: 'invalid'; readonly reason: 'missing_destination_id' | 'missing_value' };

export function decodeDelivery(record: IncomingRecord): DecodedDelivery {
  const destinationId = headerText(record, HEADER.destinationId);
  if (!destinationId) return { kind: 'invalid', reason: 'missing_destination_id' };
  if (!record.value || record.value.length === 0)
    return { kind: 'invalid', reason: 'missing_value' };
  const attempt = Number(headerText(record, HEADER.attempt) ?? '1');
  const firstAttemptAt = Number(headerText(record, HEADER.firstAttemptAt));
  const webhookIds = headerText(record, HEADER.webhookIds);
  return {
    kind: 'delivery',
    body: record.value,
    facts: {
      destinationId,
      sourceId: headerText(record, HEADER.sourceId),
      type: headerText(record, HEADER.callType),
      messageId: headerText(record, HEADER.messageId),
      attempt: Number.isInteger(attempt) && attempt >= 1 ? attempt : 1,
      firstAttemptAt:
        Number.isFinite(firstAttemptAt) && firstAttemptAt > 0 ? firstAttemptAt : undefined,
      webhookIds: webhookIds === undefined ? undefined : webhookIds.split(',').filter(Boolean),
    },
  };
}

/** Where and when a delivery's next attempt goes. */
export interface RetrySchedule {
  readonly delaySeconds: number;
  /** The attempt the retry will make. */
  readonly attempt: number;
  readonly firstAttemptAt: number;
  readonly dueAt: number;
  readonly webhookIds: readonly string[] | undefined;
  /** Why the last attempt failed, or why the delivery left the main topic without one. */
  readonly reason: string;
  readonly lastStatus: number | undefined;
}

/** The delivery again, on the retry tier of its delay: same key, same bytes. */
export function retryRecord(record: IncomingRecord, schedule: RetrySchedule): OutgoingRecord {
  const headers = copyHeaders(record);
  headers[HEADER.attempt] = String(schedule.attempt);
  headers[HEADER.firstAttemptAt] = String(schedule.firstAttemptAt);
  headers[HEADER.dueAt] = String(schedule.dueAt);
  headers[HEADER.reason] = schedule.reason;
  if (schedule.webhookIds === undefined) delete headers[HEADER.webhookIds];
  else headers[HEADER.webhookIds] = schedule.webhookIds.join(',');
  setStatus(headers, schedule.lastStatus);
  return {
    topic: retryTopic(schedule.delaySeconds),
    key: record.key,
    value: record.value ?? '',
    headers,
  };
}

/** Why and when a delivery died. */
export interface DeadLetter {
  readonly reason: string;
  readonly lastStatus: number | undefined;
  /** Attempts made (0 when none could be). */
  readonly attempts: number;
  readonly firstAttemptAt: number | undefined;
  readonly lastAttemptAt: number;
}

/** The delivery on the dead-letter topic: same key, same bytes, headers saying why. */
export function deadRecord(record: IncomingRecord, dead: DeadLetter): OutgoingRecord {
  const headers = copyHeaders(record);
  delete headers[HEADER.dueAt];
  headers[HEADER.reason] = dead.reason;
  headers[HEADER.attempt] = String(dead.attempts);
  headers[HEADER.lastAttemptAt] = String(dead.lastAttemptAt);
  if (dead.firstAttemptAt !== undefined)
    headers[HEADER.firstAttemptAt] = String(dead.firstAttemptAt);
  setStatus(headers, dead.lastStatus);
  return { topic: TOPIC.deliveriesDead, key: record.key, value: record.value ?? '', headers };
}

/** The outcome record of a delivery somebody waits for, keyed like the delivery. */
export function outcomeRecord(
  record: IncomingRecord,
  facts: DeliveryFacts,
  outcome: {
    result: DeliveryResult;
    reason?: string;
    lastStatus?: number;
    attempts: number;
    at: number;
  },
): OutgoingRecord {
  const value: DeliveryOutcome = {
    messageId: facts.messageId ?? '',
    sourceId: facts.sourceId ?? '',
    destinationId: facts.destinationId,
    type: facts.type ?? '',
    result: outcome.result,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(outcome.lastStatus === undefined ? {} : { lastStatus: outcome.lastStatus }),
    attempts: outcome.attempts,
    at: new Date(outcome.at).toISOString(),
  };
  const headers = {
    [HEADER.destinationId]: facts.destinationId,
    [HEADER.messageId]: value.messageId,
  };
  return { topic: TOPIC.deliveryOutcomes, key: record.key, value: JSON.stringify(value), headers };
}

function setStatus(headers: Record<string, Buffer | string>, status: number | undefined): void {
  if (status === undefined) delete headers[HEADER.lastStatus];
  else headers[HEADER.lastStatus] = String(status);
}
