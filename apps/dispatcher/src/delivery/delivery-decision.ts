import type { DestinationSettings, WebhookSettings } from '@app/settings';

import type { DeadLetter, DeliveryFacts, RetrySchedule } from './delivery-record';
import { madePerRun } from './per-run';
import { planRetry } from './retry-plan';
import type { AttemptResult } from './attempt-result';

/** The retry rules a decision follows, from the app's configuration. */
export interface RetryPolicy {
  /** Retry delays in seconds, in ladder order; the last repeats. */
  readonly retryDelaysSeconds: readonly number[];
  /** How long after its first attempt a delivery may still be retried. */
  readonly retryWindowMs: number;
}

/** Why a delivery ends without reaching a webhook although it was valid when routed. */
export type DiscardReason = 'destination_disabled' | 'destination_deleted';

/** Why a delivery leaves the main topic for the first tier without an attempt. */
export type LeaveReason = 'destination_busy' | 'rate_limited';

/**
 * What becomes of a delivery: decided by the pure functions below, acted on in one place
 * (DeliveryEffects.apply), which produces, counts and logs.
 */
export type Decision =
  | { readonly kind: 'delivered'; readonly attempts: number }
  | { readonly kind: 'retry'; readonly retry: RetrySchedule }
  | { readonly kind: 'dead'; readonly dead: DeadLetter }
  | { readonly kind: 'discarded'; readonly reason: DiscardReason; readonly attempts: number };

/** The webhooks to POST to now, or what becomes of a delivery that cannot be sent. */
export type Admission =
  | { readonly kind: 'send'; readonly webhooks: readonly WebhookSettings[] }
  | { readonly kind: 'decided'; readonly decision: Decision };

/**
 * Reads the destination as it is now: disabled or deleted since routing ends the delivery as
 * discarded; a retry whose webhooks were all removed since is dead. Otherwise the webhooks
 * the delivery covers: every current one, or the retry's subset still present (one added
 * since is not part of a retry in progress).
 */
export function admit(
  facts: DeliveryFacts,
  destination: DestinationSettings | undefined,
  now: number,
): Admission {
  if (!destination || !destination.enabled) {
    const reason = destination ? 'destination_disabled' : 'destination_deleted';
    return decided({ kind: 'discarded', reason, attempts: facts.attempt - 1 });
  }
  const ids = facts.webhookIds;
  const webhooks =
    ids === undefined
      ? destination.webhooks
      : destination.webhooks.filter((webhook) => ids.includes(webhook.id));
  if (webhooks.length === 0) return decided(deadBeforeAttempt(facts, 'webhooks_removed', now));
  return { kind: 'send', webhooks };
}

/** A delivery that dies before any POST of this attempt (its secret cannot be opened, ...). */
export function deadBeforeAttempt(facts: DeliveryFacts, reason: string, now: number): Decision {
  return {
    kind: 'dead',
    dead: {
      reason,
      lastStatus: undefined,
      attempts: facts.attempt - 1,
      firstAttemptAt: facts.firstAttemptAt,
      lastAttemptAt: now,
    },
  };
}

/** A main-topic delivery goes to the first tier without an attempt, keeping its attempt count. */
export function leaveMainTopic(
  facts: DeliveryFacts,
  reason: LeaveReason | `ordering_suspended_${string}`,
  now: number,
  policy: RetryPolicy,
): Decision {
  const delaySeconds = policy.retryDelaysSeconds[0];
  return {
    kind: 'retry',
    retry: {
      delaySeconds,
      attempt: facts.attempt,
      firstAttemptAt: facts.firstAttemptAt ?? now,
      dueAt: now + delaySeconds * 1000,
      webhookIds: facts.webhookIds,
      reason,
      lastStatus: undefined,
    },
  };
}

/**
 * A delivery whose destination's breaker is open (or half-open with its probes out) goes back
 * to a tier without an attempt, keeping its attempt count: the shortest tier that brings it
 * back at or after `untilMs`, and no shorter than the longest tier its age has reached (so an
 * old backlog comes back a few times an hour, as the ladder would, not once per cool-down),
 * within the window; else the longest that still fits (it waits again then). Only when no
 * tier fits the window is it dead, as any retry would be.
 */
export function waitForBreaker(
  facts: DeliveryFacts,
  untilMs: number,
  now: number,
  policy: RetryPolicy,
): Decision {
  const firstAttemptAt = facts.firstAttemptAt ?? now;
  const closesAt = firstAttemptAt + policy.retryWindowMs;
  const tiers = [...new Set(policy.retryDelaysSeconds)].sort((a, b) => a - b);
  const fitting = tiers.filter((delay) => now + delay * 1000 <= closesAt);
  if (fitting.length === 0) return deadBeforeAttempt(facts, 'retry_window_closed', now);
  const ageMs = now - firstAttemptAt;
  const reached = tiers.filter((delay) => delay * 1000 <= ageMs).pop() ?? 0;
  const backAt = Math.max(untilMs, now + reached * 1000);
  const delaySeconds =
    fitting.find((delay) => now + delay * 1000 >= backAt) ?? fitting[fitting.length - 1];
  return {
    kind: 'retry',
    retry: {
      delaySeconds,
      attempt: facts.attempt,
      firstAttemptAt,
      dueAt: now + delaySeconds * 1000,
      webhookIds: facts.webhookIds,
      reason: 'breaker_open',
      lastStatus: undefined,
    },
  };
}

/** Inputs of {@link decideAttempt}: what each webhook answered, in the order of `webhooks`. */
export interface AttemptInput {
  readonly facts: DeliveryFacts;
  readonly webhooks: readonly WebhookSettings[];
  readonly results: readonly AttemptResult[];
  /** When this attempt started (the first attempt time of a first attempt). */
  readonly startedAt: number;
  readonly now: number;
  readonly policy: RetryPolicy;
}

/**
 * Any 2xx delivers. Otherwise the webhooks that failed in a retryable way go together to the
 * next tier (a `Retry-After` may pick a longer one); none such, or a next attempt after the
 * window, and the delivery is dead. Of the facts it reads only `attempt` and `firstAttemptAt`,
 * which {@link decideBatch} relies on.
 */
export function decideAttempt(input: AttemptInput): Decision {
  const { facts, webhooks, results, now } = input;
  const attempts = facts.attempt;
  if (results.some((r) => r.kind === 'success')) return { kind: 'delivered', attempts };
  const firstAttemptAt = facts.firstAttemptAt ?? input.startedAt;
  const lastStatus = results.map((r) => r.status).find((s) => s !== undefined);
  const dead = (reason: string): Decision => ({
    kind: 'dead',
    dead: { reason, lastStatus, attempts, firstAttemptAt, lastAttemptAt: now },
  });
  const retryable = webhooks.filter((_, i) => results[i].kind === 'retryable');
  if (retryable.length === 0) {
    return dead(results[0].kind === 'permanent' ? results[0].reason : 'permanent_failure');
  }
  const retryAfters = results.flatMap((r) =>
    r.kind === 'retryable' && r.retryAfterMs !== undefined ? [r.retryAfterMs] : [],
  );
  const plan = planRetry({
    ladder: input.policy.retryDelaysSeconds,
    failures: attempts,
    now,
    firstAttemptAt,
    windowMs: input.policy.retryWindowMs,
    retryAfterMs: retryAfters.length > 0 ? Math.max(...retryAfters) : undefined,
  });
  if (plan.kind === 'window_closed') return dead('retry_window_closed');
  return {
    kind: 'retry',
    retry: {
      delaySeconds: plan.delaySeconds,
      attempt: attempts + 1,
      firstAttemptAt,
      dueAt: plan.dueAt,
      webhookIds: retryable.map((w) => w.id),
      reason: results.find((r) => r.kind === 'retryable')!.reason,
      lastStatus,
    },
  };
}

/**
 * {@link decideAttempt} for each of a batch's calls, which share its webhooks and answers. Calls
 * with the same attempt and first attempt time share one decision object (`decideAttempt` reads
 * nothing else of a call's facts), so a batch's ledger state is made once (batch-outcome.ts).
 */
export function decideBatch(
  calls: readonly { readonly facts: DeliveryFacts }[],
  input: Omit<AttemptInput, 'facts'>,
): Decision[] {
  return madePerRun(
    calls,
    ({ facts }, { facts: previous }) =>
      facts.attempt === previous.attempt && facts.firstAttemptAt === previous.firstAttemptAt,
    ({ facts }) => decideAttempt({ ...input, facts }),
  );
}

function decided(decision: Decision): Admission {
  return { kind: 'decided', decision };
}
