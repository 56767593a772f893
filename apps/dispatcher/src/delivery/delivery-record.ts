import { DeliveryOutcome, HEADER, retryTopic, TOPIC, WebhookAttempt } from '@app/contracts';
import { copyHeaders, headerText, IncomingRecord, OutgoingRecord } from '@app/kafka';

import type { Decision } from './delivery-decision';
import type { AttemptResult } from './webhook-client';

/** A delivery's facts, read from its headers: the body is never parsed. */
export interface DeliveryFacts {
  /**
   * The id its record carries (a replay's); otherwise the ledger derives it from the
   * destination and message id (no hash on the dispatcher's path).
   */
  readonly deliveryId: string | undefined;
  readonly destinationId: string;
  readonly sourceId: string | undefined;
  readonly type: string | undefined;
  readonly messageId: string | undefined;
  /** A track call's event, or a page's or screen's name. */
  readonly event: string | undefined;
  /** The delivery a replay repeats. */
  readonly replayOf: string | undefined;
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
  const messageId = headerText(record, HEADER.messageId);
  return {
    kind: 'delivery',
    body: record.value,
    facts: {
      deliveryId: headerText(record, HEADER.deliveryId),
      destinationId,
      sourceId: headerText(record, HEADER.sourceId),
      type: headerText(record, HEADER.callType),
      messageId,
      event: headerText(record, HEADER.event),
      replayOf: headerText(record, HEADER.replayOf),
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

/** The outcome record of one attempt (or of a delivery moved on without one), keyed like the delivery. */
export function outcomeRecord(record: IncomingRecord, outcome: DeliveryOutcome): OutgoingRecord {
  const headers = {
    [HEADER.destinationId]: outcome.destinationId,
    [HEADER.messageId]: outcome.messageId,
    [HEADER.callType]: outcome.type,
  };
  return {
    topic: TOPIC.deliveryOutcomes,
    key: record.key,
    value: JSON.stringify(outcome),
    headers,
  };
}

function setStatus(headers: Record<string, Buffer | string>, status: number | undefined): void {
  if (status === undefined) delete headers[HEADER.lastStatus];
  else headers[HEADER.lastStatus] = String(status);
}

/** One webhook's answer to an attempt, with how long it took. */
export interface TimedResult {
  readonly webhookId: string;
  readonly result: AttemptResult;
  readonly latencyMs: number;
}

/**
 * The ledger's view of a decision: the outcome record's value. `firstAttemptAt` is always set
 * (when the dispatcher first took the delivery) and the same on every outcome of a delivery:
 * it places the delivery's ledger row.
 */
export function deliveryOutcome(
  facts: DeliveryFacts,
  decision: Decision,
  answers: readonly TimedResult[] | undefined,
  now: number,
): DeliveryOutcome {
  const at = new Date(now).toISOString();
  // A first try's first attempt is now: one string serves both.
  const iso = (ms: number | undefined) =>
    ms === undefined ? undefined : ms === now ? at : new Date(ms).toISOString();
  const common = {
    deliveryId: facts.deliveryId,
    messageId: facts.messageId ?? '',
    sourceId: facts.sourceId ?? '',
    destinationId: facts.destinationId,
    type: facts.type ?? '',
    event: facts.event,
    at,
    webhooks: answers?.map(webhookAttempt),
    replayOf: facts.replayOf,
  };
  switch (decision.kind) {
    case 'delivered':
      return {
        ...common,
        result: 'delivered',
        attempts: decision.attempts,
        lastStatus: answers?.find((a) => a.result.kind === 'success')?.result.status,
        firstAttemptAt: iso(facts.firstAttemptAt ?? now),
      };
    case 'retry': {
      const { retry } = decision;
      return {
        ...common,
        result: 'retrying',
        reason: retry.reason,
        lastStatus: retry.lastStatus,
        attempts: retry.attempt - 1,
        firstAttemptAt: iso(retry.firstAttemptAt),
        nextAttemptAt: iso(retry.dueAt),
      };
    }
    case 'dead': {
      const { dead } = decision;
      return {
        ...common,
        result: 'dead',
        reason: dead.reason,
        lastStatus: dead.lastStatus,
        attempts: dead.attempts,
        firstAttemptAt: iso(dead.firstAttemptAt ?? now),
      };
    }
    case 'discarded':
      return {
        ...common,
        result: 'discarded',
        reason: decision.reason,
        attempts: decision.attempts,
        firstAttemptAt: iso(facts.firstAttemptAt ?? now),
      };
  }
}

function webhookAttempt({ webhookId, result, latencyMs }: TimedResult): WebhookAttempt {
  return {
    webhookId,
    kind: result.kind,
    status: result.status,
    ...(result.kind === 'success' ? {} : { reason: result.reason, detail: result.detail }),
    latencyMs: Math.round(latencyMs * 10) / 10,
  };
}
