import { HEADER, retryTopic, TOPIC } from '@app/contracts';
import { copyHeaders, HeaderNames, headerTexts, IncomingRecord, OutgoingRecord } from '@app/kafka';

import type { Decision } from './delivery-decision';
import type { AttemptResult } from './attempt-result';

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
  /** The call's userId and anonymousId, from their headers (for the ledger's search). */
  readonly userId: string | undefined;
  readonly anonymousId: string | undefined;
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

/** The headers a delivery's facts are read from, in one pass (`DELIVERY_HEADERS` order). */
const DELIVERY_HEADERS = new HeaderNames([
  HEADER.destinationId,
  HEADER.attempt,
  HEADER.firstAttemptAt,
  HEADER.webhookIds,
  HEADER.messageId,
  HEADER.deliveryId,
  HEADER.sourceId,
  HEADER.callType,
  HEADER.event,
  HEADER.userId,
  HEADER.anonymousId,
  HEADER.replayOf,
]);

/** Reads a delivery record's facts from its headers, in one pass over them. */
export function decodeDelivery(record: IncomingRecord): DecodedDelivery {
  const [
    destinationId,
    attemptText,
    firstAttemptText,
    webhookIds,
    messageId,
    deliveryId,
    sourceId,
    type,
    event,
    userId,
    anonymousId,
    replayOf,
  ] = headerTexts(record, DELIVERY_HEADERS);
  if (!destinationId) return { kind: 'invalid', reason: 'missing_destination_id' };
  if (!record.value || record.value.length === 0)
    return { kind: 'invalid', reason: 'missing_value' };
  const attempt = Number(attemptText ?? '1');
  const firstAttemptAt = Number(firstAttemptText);
  return {
    kind: 'delivery',
    body: record.value,
    facts: {
      deliveryId,
      destinationId,
      sourceId,
      type,
      messageId,
      event,
      userId,
      anonymousId,
      replayOf,
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

/**
 * The delivery again, on the retry tier of its delay: same key, same bytes; `trace` (the
 * attempt span's `traceparent`, when traces are on) replaces the record's own.
 */
export function retryRecord(
  record: IncomingRecord,
  schedule: RetrySchedule,
  trace?: Readonly<Record<string, string>>,
): OutgoingRecord {
  const headers = copyHeaders(record);
  if (trace) Object.assign(headers, trace);
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

/** A delete's outcome as a record of its own (the deletion receipts read it), keyed like the delivery. */
export function outcomeRecord(
  record: IncomingRecord,
  facts: DeliveryFacts,
  json: string,
): OutgoingRecord {
  const headers = {
    [HEADER.destinationId]: facts.destinationId,
    [HEADER.messageId]: facts.messageId ?? '',
    [HEADER.callType]: facts.type ?? '',
  };
  return { topic: TOPIC.deliveryOutcomes, key: record.key, value: json, headers };
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
  /** A failed request's headers, values masked (`maskedHeaders`); absent on success. */
  readonly requestHeaders?: Readonly<Record<string, string>>;
}

/**
 * A string as JSON; ids and names are almost always plain, which skips JSON.stringify. What
 * JSON cannot take as it is (a quote, a backslash, a control character below U+0020, a lone
 * surrogate) goes to JSON.stringify, and so does a surrogate pair (rare): a loop over char
 * codes costs less than a Unicode regular expression.
 */
export function str(text: string): string {
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c & 0xf800) === 0xd800) {
      return JSON.stringify(text);
    }
  }
  return `"${text}"`;
}

/**
 * The ledger's view of a decision: an outcome's JSON (see `DeliveryOutcome`), written straight
 * from the facts. Building an object and stringifying it cost about four times as much, on a
 * path taken once per delivery. Times are epoch ms. `firstAttemptAt` (when the dispatcher
 * first took the delivery) is the same on every outcome of a delivery and places its ledger
 * row; it is left out where it is `at`, as on every first try's outcome. `batchId` names the
 * batch request the attempt travelled in, for a batching destination.
 */
export function outcomeJson(
  facts: DeliveryFacts,
  decision: Decision,
  answers: readonly TimedResult[] | undefined,
  now: number,
  batchId?: string,
): string {
  let json =
    `{"messageId":${str(facts.messageId ?? '')},"sourceId":${str(facts.sourceId ?? '')}` +
    `,"destinationId":${str(facts.destinationId)},"type":${str(facts.type ?? '')},"at":${now}`;
  if (facts.deliveryId !== undefined) json += `,"deliveryId":${str(facts.deliveryId)}`;
  if (facts.event !== undefined) json += `,"event":${str(facts.event)}`;
  if (facts.userId !== undefined) json += `,"userId":${str(facts.userId)}`;
  if (facts.anonymousId !== undefined) json += `,"anonymousId":${str(facts.anonymousId)}`;
  if (facts.replayOf !== undefined) json += `,"replayOf":${str(facts.replayOf)}`;
  json += stateJson(facts, decision, answers, now);
  json += attemptJson(answers, batchId);
  return json + '}';
}

/** The attempt's members, each after a comma: its webhooks' answers and its batch request. */
export function attemptJson(
  answers: readonly TimedResult[] | undefined,
  batchId: string | undefined,
): string {
  let json = '';
  if (answers !== undefined) {
    let webhooks = '';
    for (const answer of answers) webhooks += (webhooks ? ',' : '') + webhookJson(answer);
    json += `,"webhooks":[${webhooks}]`;
  }
  if (batchId !== undefined) json += `,"batchId":${str(batchId)}`;
  return json;
}

/**
 * An outcome's members that tell what became of the delivery (`result` to `nextAttemptAt`),
 * each after a comma: the part a batch's calls mostly share (see `batch-outcome.ts`). Of the
 * facts it reads only `firstAttemptAt`, which `batch-outcome.ts` relies on.
 */
export function stateJson(
  facts: DeliveryFacts,
  decision: Decision,
  answers: readonly TimedResult[] | undefined,
  now: number,
): string {
  let json = '';
  switch (decision.kind) {
    case 'delivered': {
      const status = answers?.find((a) => a.result.kind === 'success')?.result.status;
      json += `,"result":"delivered","attempts":${decision.attempts}`;
      if (status !== undefined) json += `,"lastStatus":${status}`;
      json += firstAttempt(facts.firstAttemptAt, now);
      break;
    }
    case 'retry': {
      const { retry } = decision;
      json += `,"result":"retrying","reason":${str(retry.reason)},"attempts":${retry.attempt - 1}`;
      if (retry.lastStatus !== undefined) json += `,"lastStatus":${retry.lastStatus}`;
      json += `${firstAttempt(retry.firstAttemptAt, now)},"nextAttemptAt":${retry.dueAt}`;
      break;
    }
    case 'dead': {
      const { dead } = decision;
      json += `,"result":"dead","reason":${str(dead.reason)},"attempts":${dead.attempts}`;
      if (dead.lastStatus !== undefined) json += `,"lastStatus":${dead.lastStatus}`;
      json += firstAttempt(dead.firstAttemptAt, now);
      break;
    }
    case 'discarded':
      json += `,"result":"discarded","reason":${str(decision.reason)},"attempts":${decision.attempts}`;
      json += firstAttempt(facts.firstAttemptAt, now);
      break;
  }
  return json;
}

/** The `firstAttemptAt` member, or nothing when it is `now` (the outcome's `at`). */
function firstAttempt(at: number | undefined, now: number): string {
  return at === undefined || at === now ? '' : `,"firstAttemptAt":${at}`;
}

/** One webhook's answer as a `WebhookAttempt`'s JSON. */
function webhookJson({ webhookId, result, latencyMs, requestHeaders }: TimedResult): string {
  let json = `{"webhookId":${str(webhookId)},"kind":"${result.kind}"`;
  if (result.status !== undefined) json += `,"status":${result.status}`;
  if (result.kind !== 'success') {
    json += `,"reason":${str(result.reason)},"detail":${str(result.detail)}`;
    if (result.body !== undefined) json += `,"responseBody":${JSON.stringify(result.body)}`;
  }
  if (requestHeaders !== undefined) json += `,"requestHeaders":${JSON.stringify(requestHeaders)}`;
  return json + `,"latencyMs":${Math.round(latencyMs * 10) / 10}}`;
}

/** Names a delivery in a log line. */
export function describeDelivery(facts: DeliveryFacts): string {
  return `delivery of message ${facts.messageId ?? '(none)'} to destination ${facts.destinationId}`;
}
