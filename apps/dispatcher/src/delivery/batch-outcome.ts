import type { Decision } from './delivery-decision';
import { attemptJson, DeliveryFacts, stateJson, str, TimedResult } from './delivery-record';
import { madePerRun } from './per-run';

/**
 * Most bytes of the calls' members in one batch outcome: a batch of many calls with long ids
 * becomes several, each well within one outcome record.
 */
export const MAX_BATCH_OUTCOME_BYTES = 128 * 1024;

/** One call of a batch whose outcome goes to the ledger. */
export interface OutcomeCall {
  readonly facts: DeliveryFacts;
  readonly decision: Decision;
}

/** A batch outcome's JSON and the number of calls' outcomes it stands for. */
export interface BatchOutcomeJson {
  readonly json: string;
  readonly count: number;
}

/**
 * The ledger outcomes of a batch's calls (all of one destination, one attempt) as batch
 * outcomes (see `DeliveryOutcome` in libs/contracts): what every call shares once (the
 * destination, the time, the webhooks' answers, the batch id, and the source and state when
 * all calls have the same), and `calls`, each call's own members. The ledger reads each call's
 * outcome as the shared members with its own, the same outcome `outcomeJson` writes for it
 * alone, at a fraction of the bytes and of the work.
 */
export function batchOutcomeJson(
  calls: readonly OutcomeCall[],
  answers: readonly TimedResult[] | undefined,
  now: number,
  batchId: string | undefined,
  maxBytes = MAX_BATCH_OUTCOME_BYTES,
): BatchOutcomeJson[] {
  if (calls.length === 0) return [];
  const states = sharedStates(calls, answers, now);
  const shared = states.every((state) => state === states[0]) ? states[0] : undefined;
  const head =
    `{"destinationId":${str(calls[0].facts.destinationId)},"at":${now}` +
    (shared ?? '') +
    attemptJson(answers, batchId) +
    ',"calls":[';
  const entries: BatchOutcomeJson[] = [];
  let members = '';
  let count = 0;
  for (let i = 0; i < calls.length; i += 1) {
    const call = callJson(calls[i].facts, shared === undefined ? states[i] : '');
    if (count > 0 && members.length + call.length > maxBytes) {
      entries.push({ json: `${head}${members}]}`, count });
      members = '';
      count = 0;
    }
    members += (count > 0 ? ',' : '') + call;
    count += 1;
  }
  entries.push({ json: `${head}${members}]}`, count });
  return entries;
}

/**
 * Each call's {@link sharable} members, made once for a run of calls with the same decision
 * object, source and first attempt time (`stateJson` reads nothing else of a call's facts; a
 * batch's calls mostly share one decision, see `decideBatch`). Shared as one string, they
 * compare at once.
 */
function sharedStates(
  calls: readonly OutcomeCall[],
  answers: readonly TimedResult[] | undefined,
  now: number,
): string[] {
  return madePerRun(
    calls,
    (call, previous) =>
      call.decision === previous.decision &&
      call.facts.sourceId === previous.facts.sourceId &&
      call.facts.firstAttemptAt === previous.facts.firstAttemptAt,
    (call) => sharable(call.facts, call.decision, answers, now),
  );
}

/** The members a batch's calls mostly share: the source and the state. */
function sharable(
  facts: DeliveryFacts,
  decision: Decision,
  answers: readonly TimedResult[] | undefined,
  now: number,
): string {
  return `,"sourceId":${str(facts.sourceId ?? '')}${stateJson(facts, decision, answers, now)}`;
}

/** A call's own members, then `rest` (its source and state when the batch does not share them). */
function callJson(facts: DeliveryFacts, rest: string): string {
  let json = `{"messageId":${str(facts.messageId ?? '')},"type":${str(facts.type ?? '')}`;
  if (facts.deliveryId !== undefined) json += `,"deliveryId":${str(facts.deliveryId)}`;
  if (facts.event !== undefined) json += `,"event":${str(facts.event)}`;
  if (facts.userId !== undefined) json += `,"userId":${str(facts.userId)}`;
  if (facts.anonymousId !== undefined) json += `,"anonymousId":${str(facts.anonymousId)}`;
  if (facts.replayOf !== undefined) json += `,"replayOf":${str(facts.replayOf)}`;
  return json + rest + '}';
}
