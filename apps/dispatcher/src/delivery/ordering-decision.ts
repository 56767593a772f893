import type { DestinationSettings } from '@app/settings';

import { Decision, leaveMainTopic, RetryPolicy, waitForBreaker } from './delivery-decision';
import type { DeliveryFacts, RetrySchedule } from './delivery-record';
import type { DeliveryPath } from './delivery-effects';

/**
 * Why a user's ordering was suspended (its held call went to a retry tier, its later calls
 * flowed): `pending`, as many of its calls waited as the destination allows; `hold_time`, its
 * call held them as long as the destination allows; `partition_full`, held lanes filled the
 * partition's lines and nothing finished; `ordering_off`, the destination's ordering was
 * turned off (or batching on) while the call was held; `breaker_open`, the destination's
 * circuit breaker is open: every user's calls would hold and fill the partitions' lines, so
 * they wait on the tiers for its probe instead.
 */
export type SuspendReason =
  'pending' | 'hold_time' | 'partition_full' | 'ordering_off' | 'breaker_open';

/** What a held call does next: wait and try again in place, or give its lane up. */
export type HoldStep =
  | { readonly kind: 'wait'; readonly waitMs: number }
  | { readonly kind: 'suspend'; readonly reason: SuspendReason };

/** Inputs of {@link nextHoldStep}. */
export interface HoldInput {
  /** When the call began holding its lane (epoch ms). */
  readonly heldSince: number;
  readonly now: number;
  /** Waits made in place so far: picks the back-off. */
  readonly waits: number;
  /** In-place back-off in ms, in order; the last repeats. */
  readonly delaysMs: readonly number[];
  readonly maxHoldSeconds: number;
  /** The shortest wait the destination asked for (a `Retry-After`). */
  readonly atLeastMs?: number;
  /** The pipeline asked the hold to stop. */
  readonly stop?: 'pending' | 'partition_full';
}

/**
 * A held call waits its back-off (or longer when the destination asked), unless the pipeline
 * asked it to stop or the wait would end past the destination's longest hold: then its ordering
 * is suspended.
 */
export function nextHoldStep(input: HoldInput): HoldStep {
  if (input.stop !== undefined) return { kind: 'suspend', reason: input.stop };
  const { delaysMs, waits } = input;
  const backoff = delaysMs[Math.min(waits, delaysMs.length - 1)];
  const waitMs = Math.max(backoff, input.atLeastMs ?? 0);
  if (input.now + waitMs > input.heldSince + input.maxHoldSeconds * 1000) {
    return { kind: 'suspend', reason: 'hold_time' };
  }
  return { kind: 'wait', waitMs };
}

/**
 * Whether a delivery that cannot be made now is held in place rather than sent to a tier: a
 * main-topic call of an ordered destination (ordering does not combine with batching). A
 * retry-tier call is one whose user's ordering was suspended already.
 */
export function holdsInPlace(
  destination: DestinationSettings | undefined,
  path: DeliveryPath,
): boolean {
  return path === 'main' && !!destination?.ordering && !destination.batching;
}

/** The facts of a held call's next attempt, after a retry decision. */
export function nextAttemptFacts(facts: DeliveryFacts, retry: RetrySchedule): DeliveryFacts {
  return {
    ...facts,
    attempt: retry.attempt,
    firstAttemptAt: retry.firstAttemptAt,
    webhookIds: retry.webhookIds,
  };
}

/** A retry made in place: the ledger's next attempt time is the end of its wait. */
export function inPlaceRetry(retry: RetrySchedule, now: number, waitMs: number): Decision {
  return { kind: 'retry', retry: { ...retry, dueAt: now + waitMs } };
}

/**
 * A held call whose ordering is suspended goes to a tier as any retry would: on the tier its
 * last failure planned (at once when that time has passed), or without an attempt made yet
 * on the first tier. Its reason says the ordering was suspended, and why (the ledger shows it).
 */
export function suspendedRetry(
  facts: DeliveryFacts,
  last: RetrySchedule | undefined,
  reason: SuspendReason,
  now: number,
  policy: RetryPolicy,
): Decision {
  const why = `ordering_suspended_${reason}` as const;
  if (last !== undefined) {
    return { kind: 'retry', retry: { ...last, reason: why, dueAt: Math.max(last.dueAt, now) } };
  }
  return leaveMainTopic(facts, why, now, policy);
}

/**
 * A call of an ordered destination whose breaker is open waits on a tier for the breaker's
 * probe, as any call does (`waitForBreaker`), its reason saying its ordering was suspended.
 */
export function suspendedForBreaker(
  facts: DeliveryFacts,
  untilMs: number,
  now: number,
  policy: RetryPolicy,
): Decision {
  const decision = waitForBreaker(facts, untilMs, now, policy);
  if (decision.kind !== 'retry') return decision;
  return { kind: 'retry', retry: { ...decision.retry, reason: 'ordering_suspended_breaker_open' } };
}
