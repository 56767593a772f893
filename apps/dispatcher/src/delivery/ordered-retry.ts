import { Logger } from '@nestjs/common';

import { DurableLater, HoldStopReason, IncomingRecord, LaneHold } from '@app/kafka';
import type {
  DestinationSettings,
  OrderingSettings,
  SettingsCache,
  WebhookSettings,
} from '@app/settings';
import type { Span } from '@app/tracing';

import { admit, Decision, RetryPolicy } from './delivery-decision';
import { DeliveryFacts, describeDelivery, RetrySchedule, TimedResult } from './delivery-record';
import { verdictOf } from './circuit-breaker';
import { DeliveryCapacity } from './delivery-capacity';
import { DeliveryEffects, Handled } from './delivery-effects';
import { DispatcherMetrics } from './dispatcher.metrics';
import {
  holdsInPlace,
  inPlaceRetry,
  nextAttemptFacts,
  nextHoldStep,
  SuspendReason,
  suspendedForBreaker,
  suspendedRetry,
} from './ordering-decision';

/** In-place back-off of ordered delivery when not configured, in ms; the last repeats. */
export const DEFAULT_ORDERING_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 15_000, 30_000];

/** An attempt's decision, with each webhook's answer when POSTs were made. */
export interface Attempt {
  readonly decision: Decision;
  readonly answers?: readonly TimedResult[];
}

/** Signs, POSTs and decides one attempt (the dispatch's own). */
export type Attempter = (
  facts: DeliveryFacts,
  body: Buffer,
  destination: DestinationSettings,
  webhooks: readonly WebhookSettings[],
  span?: Span,
) => Promise<Attempt>;

/** A main-topic call of an ordered destination that cannot be delivered now. */
export interface HeldCall {
  readonly record: IncomingRecord;
  readonly facts: DeliveryFacts;
  readonly body: Buffer;
  /** The attempt's span, when traces are on: the held call's later attempts are told on it. */
  readonly span?: Span;
  /** The failed attempt's retry decision and answers; absent when no attempt was made. */
  readonly failed?: { readonly retry: RetrySchedule; readonly answers?: readonly TimedResult[] };
}

/** What the in-place retries need of the dispatch. */
export interface OrderedRetryDeps {
  readonly settings: Pick<SettingsCache, 'destination'>;
  readonly capacity: DeliveryCapacity;
  readonly effects: DeliveryEffects;
  readonly metrics: DispatcherMetrics;
  readonly logger: Logger;
}

/** What the pipeline asked of a hold, and the wake-up of its wait. */
interface HoldControl {
  stop: HoldStopReason | undefined;
  wake: (() => void) | undefined;
}

/**
 * Ordered delivery (docs/architecture.md, "Ordered delivery"): a call that cannot be delivered
 * now is retried in place rather than on a retry tier, on timers, holding no slot while it
 * waits; its answer to the pipeline ({@link LaneHold}) keeps its user's later calls waiting in
 * their lane. Bounded by the destination's ordering: past its pending calls or its hold time
 * (or when the pipeline needs the room) the call goes to a tier as any retry would, and its
 * user's ordering is suspended: counted, and said in the ledger's reason.
 */
export class OrderedRetries {
  constructor(
    private readonly deps: OrderedRetryDeps,
    private readonly options: RetryPolicy & { readonly orderingRetryDelaysMs?: readonly number[] },
    private readonly now: () => number,
    private readonly attempt: Attempter,
  ) {}

  /** Holds the call's lane until it is delivered, dead, discarded or suspended. */
  hold(call: HeldCall, ordering: OrderingSettings): LaneHold {
    const control: HoldControl = { stop: undefined, wake: undefined };
    const stop = (reason: HoldStopReason): void => {
      control.stop ??= reason;
      control.wake?.();
    };
    return new LaneHold(this.retry(call, ordering, control), stop, ordering.maxPendingCalls);
  }

  /** Waits and tries again until the call is done or suspended; nothing at all once abandoned. */
  private async retry(
    call: HeldCall,
    ordering: OrderingSettings,
    control: HoldControl,
  ): Promise<DurableLater | undefined> {
    const { record, body, span } = call;
    const heldSince = this.now();
    const delaysMs = this.options.orderingRetryDelaysMs ?? DEFAULT_ORDERING_RETRY_DELAYS_MS;
    let { facts, failed } = call;
    let atLeastMs: number | undefined;
    if (failed !== undefined) {
      facts = nextAttemptFacts(facts, failed.retry);
      atLeastMs = retryAfterOf(failed.answers);
    }
    for (let waits = 0; ; waits += 1) {
      const now = this.now();
      const stop = control.stop;
      if (stop === 'abandon') return undefined;
      const { maxHoldSeconds } = ordering;
      const input = { heldSince, now, waits, delaysMs, maxHoldSeconds, atLeastMs, stop };
      const step = nextHoldStep(input);
      if (step.kind === 'suspend') return this.suspend(call, facts, failed, step.reason);
      // The ledger says when the next attempt is due; its outcome is durable before that attempt.
      const retried = failed && inPlaceRetry(failed.retry, now, step.waitMs);
      if (retried) this.deps.metrics.orderingRetriesInPlace.inc();
      const published =
        retried && this.deps.effects.retriedInPlace(record, facts, retried, failed!.answers);
      await this.sleep(step.waitMs, control);
      if (control.stop === 'abandon') return undefined;
      await published?.durable;
      if (control.stop !== undefined) continue;
      const destination = this.deps.settings.destination(facts.destinationId);
      const admission = admit(facts, destination, this.now());
      if (admission.kind === 'decided') {
        return this.finish(call, facts, admission.decision);
      }
      if (!holdsInPlace(destination, 'main'))
        return this.suspend(call, facts, failed, 'ordering_off');
      const tried = await this.tryOnce(facts, body, destination!, admission.webhooks, span);
      if ('untilMs' in tried) {
        return (await this.suspendForBreaker(record, facts, tried.untilMs, span)).ledger;
      }
      const { decision, answers } = tried;
      if (decision.kind !== 'retry') return this.finish(call, facts, decision, answers);
      failed = { retry: decision.retry, answers };
      facts = nextAttemptFacts(facts, decision.retry);
      atLeastMs = retryAfterOf(answers);
    }
  }

  /**
   * One attempt as a retry tier makes it: the destination's breaker, slot and rate limit, then
   * a slot of the process; or the time its open breaker closes.
   */
  private async tryOnce(
    facts: DeliveryFacts,
    body: Buffer,
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
    span: Span | undefined,
  ): Promise<Attempt | { readonly untilMs: number }> {
    const { capacity } = this.deps;
    const { gate, slots, rateLimits } = capacity;
    const id = facts.destinationId;
    const breaker = capacity.admitBreaker(id, this.now());
    if (breaker.kind === 'wait') return { untilMs: breaker.untilMs };
    if (!gate.tryAcquire(id, this.now())) await gate.acquire(id);
    await rateLimits.take(id, destination.rateLimitPerSecond);
    if (!slots.tryAcquire()) await slots.acquire();
    let attempt: Attempt | undefined;
    try {
      attempt = await this.attempt(facts, body, destination, webhooks, span);
    } finally {
      slots.release();
      gate.release(id, this.now());
      const verdict = verdictOf(attempt?.answers?.map((answer) => answer.result));
      capacity.settleProbe(id, breaker.probe, verdict);
    }
    return attempt;
  }

  private async finish(
    call: HeldCall,
    facts: DeliveryFacts,
    decision: Decision,
    answers?: readonly TimedResult[],
  ): Promise<DurableLater | undefined> {
    const { effects } = this.deps;
    return (await effects.apply(call.record, facts, decision, answers, 'main', call.span)).ledger;
  }

  /** The call goes to a tier; its user's later calls flow. */
  private suspend(
    call: HeldCall,
    facts: DeliveryFacts,
    failed: HeldCall['failed'],
    reason: SuspendReason,
  ): Promise<DurableLater | undefined> {
    this.deps.metrics.orderingSuspended.inc({ reason });
    this.deps.logger.warn(`${describeDelivery(facts)}: ordering suspended (${reason})`);
    const decision = suspendedRetry(facts, failed?.retry, reason, this.now(), this.options);
    return this.finish(call, facts, decision, failed?.answers);
  }

  /**
   * The destination's breaker is open: the call waits on a tier for its probe, and its user's
   * ordering is suspended (holding every user's calls would fill the partitions' lines).
   */
  suspendForBreaker(
    record: IncomingRecord,
    facts: DeliveryFacts,
    untilMs: number,
    span: Span | undefined,
  ): Promise<Handled> {
    this.deps.metrics.orderingSuspended.inc({ reason: 'breaker_open' });
    const decision = suspendedForBreaker(facts, untilMs, this.now(), this.options);
    return this.deps.effects.apply(record, facts, decision, undefined, 'main', span);
  }

  /** Resolves after `ms`, or at once when the pipeline asks the hold to stop. */
  private sleep(ms: number, control: HoldControl): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        control.wake = undefined;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      control.wake = done;
    });
  }
}

/** The longest `Retry-After` of the retryable answers, in ms, if any. */
function retryAfterOf(answers: readonly TimedResult[] | undefined): number | undefined {
  let longest: number | undefined;
  for (const { result } of answers ?? []) {
    if (result.kind === 'retryable' && result.retryAfterMs !== undefined) {
      longest = Math.max(longest ?? 0, result.retryAfterMs);
    }
  }
  return longest;
}
