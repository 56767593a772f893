import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';

import { BatchProducer, DurableLater, IncomingRecord, LaneHold } from '@app/kafka';
import { DestinationSettings, SettingsCache, WebhookSettings } from '@app/settings';
import { SecretBox } from '@app/signing';
import { Span, tracerOf } from '@app/tracing';

import {
  admit,
  deadBeforeAttempt,
  decideAttempt,
  leaveMainTopic,
  RetryPolicy,
  waitForBreaker,
} from './delivery-decision';
import { deadRecord, decodeDelivery, DeliveryFacts } from './delivery-record';
import { BatchDelivery } from './batch-delivery';
import { BreakerObserver } from './breaker-observer';
import { BreakerPolicy, verdictOf } from './circuit-breaker';
import { DeliveryCapacity } from './delivery-capacity';
import { DeliveryEffects, DeliveryPath, DispatchResult, Handled } from './delivery-effects';
import { tracedAttempt } from './delivery-tracing';
import { DispatcherMetrics } from './dispatcher.metrics';
import { Attempt, HeldCall, OrderedRetries } from './ordered-retry';
import { holdsInPlace } from './ordering-decision';
import { PendingCalls } from './pending-calls';
import { DestinationRateLimits } from './rate-limits.service';
import { WebhookClient } from './webhook-client';
import { PostContext, unsendableReason, WebhookPoster } from './webhook-poster';

export { BATCH_ID_HEADER } from './batch-delivery';
export type { DeliveryPath, DispatchResult } from './delivery-effects';

/** The settings of the dispatch, from the app's configuration. */
export interface DispatchOptions extends RetryPolicy {
  /** Ordered delivery's in-place back-off in ms, the last repeating (a default when absent). */
  readonly orderingRetryDelaysMs?: readonly number[];
  readonly maxInFlight: number;
  readonly maxInFlightPerDestination: number;
  /** Each destination's circuit breaker (per process). */
  readonly breaker: BreakerPolicy;
  /** Longest a main-topic delivery waits for a slot of its destination. */
  readonly destinationWaitMs: number;
  readonly secrets: SecretBox;
  /**
   * Share of successful deliveries whose outcome goes to the ledger (0 to 1); failures,
   * retries and deletes always do.
   */
  readonly ledgerSuccessSample: number;
  /**
   * Most calls waiting with no slot for their batch's answer or their ledger outcome
   * (`PendingCalls`); past it, a call keeps its slot until then.
   */
  readonly maxPendingCalls: number;
  readonly now?: () => number;
  /** Uniform in [0, 1); drives the success sample. */
  readonly random?: () => number;
}

export const DISPATCH_OPTIONS = Symbol('DISPATCH_OPTIONS');

/**
 * Delivers one record of the deliveries topic or of a retry tier (docs/architecture.md,
 * "Delivery semantics"): admits it against the current settings, POSTs its bytes, signed, to
 * every webhook it covers at once, lets the pure functions of `delivery-decision.ts` decide
 * what becomes of it, and acts on that decision in one place (`DeliveryEffects`). A call of a
 * batching destination goes to `BatchDelivery` instead. Resolves only once what it produced
 * was acknowledged, so the transport commits after that.
 */
@Injectable()
export class DispatchService implements OnModuleDestroy {
  private readonly logger = new Logger(DispatchService.name);
  private readonly now: () => number;
  private readonly capacity: DeliveryCapacity;
  private readonly poster: WebhookPoster;
  private readonly effects: DeliveryEffects;
  /** Calls of batching destinations, gathering into batches (batched delivery). */
  private readonly batches: BatchDelivery;
  /** Ordered destinations' calls retried in place (ordered delivery). */
  private readonly ordered: OrderedRetries;
  /** Calls answered with a wait and no slot, bounded. */
  readonly pending: PendingCalls;
  /** Undefined when traces are off: then nothing below builds a span or an attribute. */
  private readonly tracer = tracerOf('dispatcher');

  constructor(
    @Inject(SettingsCache) private readonly settings: Pick<SettingsCache, 'destination'>,
    @Inject(BatchProducer) private readonly producer: Pick<BatchProducer, 'send'>,
    @Inject(WebhookClient) client: Pick<WebhookClient, 'post'>,
    private readonly metrics: DispatcherMetrics,
    @Inject(DISPATCH_OPTIONS) private readonly options: DispatchOptions,
    @Inject(BreakerObserver) breakerObserver: Pick<BreakerObserver, 'changed'>,
    rateLimits: DestinationRateLimits,
  ) {
    const now = (this.now = options.now ?? Date.now);
    this.capacity = new DeliveryCapacity(options, breakerObserver, rateLimits, now);
    const { secrets, ledgerSuccessSample } = options;
    this.poster = new WebhookPoster(settings, client, metrics, secrets, this.logger, this.tracer);
    const random = options.random ?? Math.random;
    const effectOptions = { ledgerSuccessSample };
    this.effects = new DeliveryEffects(producer, metrics, this.logger, effectOptions, now, random);
    this.batches = new BatchDelivery(
      settings,
      this.capacity,
      this.poster,
      this.effects,
      metrics,
      this.logger,
      options,
      now,
    );
    const deps = { settings, capacity: this.capacity, effects: this.effects, metrics };
    const attempt = this.attempt.bind(this);
    this.ordered = new OrderedRetries({ ...deps, logger: this.logger }, options, now, attempt);
    const pending = new PendingCalls(options.maxPendingCalls);
    this.pending = pending;
    metrics.pendingCallsNow = () => pending.size;
  }

  /** Closing: batches still forming go now, and later ones without waiting to fill. */
  onModuleDestroy(): void {
    this.batches.close();
  }

  /**
   * Handles one delivery record, resolving once all it produced (the ledger's outcome
   * included) was acknowledged.
   * @throws when Kafka did not acknowledge what the outcome needs produced (the record is
   *   tried again)
   */
  async dispatch(record: IncomingRecord, path: DeliveryPath): Promise<DispatchResult> {
    const { result, ledger, hold } = await this.traced(record, path);
    await ledger?.durable;
    const held = await hold?.settled;
    if (held instanceof DurableLater) await held.durable;
    return typeof result === 'function' ? result() : result;
  }

  /**
   * The transports' handler: as {@link dispatch}, but a delivery whose only wait left is its
   * ledger outcome (gathered with other deliveries' into one record) answers at once with
   * that wait, so it holds no slot while the outcome gathers; its offset still waits for it.
   */
  handle(
    record: IncomingRecord,
    path: DeliveryPath,
  ): Promise<DurableLater | LaneHold | undefined> | DurableLater {
    if (this.tracer !== undefined) {
      return this.traced(record, path).then((handled) => this.answer(handled));
    }
    // The record is decoded and its destination read once here, for the batch and the
    // single-call path alike. Most calls of a batching destination join their batch at once,
    // without a turn of their own in the partition's pipeline; a traced one has its attempt's
    // span.
    const decoded = decodeDelivery(record);
    const destination =
      decoded.kind === 'delivery'
        ? this.settings.destination(decoded.facts.destinationId)
        : undefined;
    const joined =
      destination?.batching && decoded.kind === 'delivery'
        ? this.batches.join(record, decoded, path, destination)
        : undefined;
    if (joined !== undefined) return this.pending.answer(joined);
    return this.run(record, path, decoded, destination).then((handled) => this.answer(handled));
  }

  /** The transport's answer for a handled delivery: its hold, or its wait (bounded). */
  private answer(handled: Handled): DurableLater | LaneHold | Promise<undefined> | undefined {
    if (handled.hold !== undefined) return handled.hold;
    return handled.ledger && this.pending.answer(handled.ledger);
  }

  /** {@link run} in an attempt's span when traces are on. */
  private traced(record: IncomingRecord, path: DeliveryPath): Promise<Handled> {
    const tracer = this.tracer;
    if (tracer === undefined) return this.run(record, path);
    return tracedAttempt(tracer, record, (span) =>
      this.run(record, path, undefined, undefined, span),
    );
  }

  /**
   * `decoded` (the record's facts) and `destination` when the handler read them; `span` the
   * attempt's when traces are on (passed on to its POSTs and the records it produces).
   */
  private async run(
    record: IncomingRecord,
    path: DeliveryPath,
    decoded = decodeDelivery(record),
    destination = decoded.kind === 'delivery'
      ? this.settings.destination(decoded.facts.destinationId)
      : undefined,
    span?: Span,
  ): Promise<Handled> {
    if (decoded.kind === 'invalid') return this.dropInvalid(record, decoded.reason);
    const { facts, body } = decoded;
    const admission = admit(facts, destination, this.now());
    if (admission.kind === 'decided') {
      return this.effects.apply(record, facts, admission.decision, undefined, 'main', span);
    }
    if (destination!.batching) {
      return this.batches.add({ record, facts, body, path, span }, destination!);
    }
    const destinationId = facts.destinationId;
    const { gate, slots, rateLimits } = this.capacity;
    // An ordered destination's call that cannot go now waits in place, holding its user's lane.
    const ordered = holdsInPlace(destination, path);
    // An open breaker: no attempt and no slot; the delivery waits on a tier for its probe (an
    // ordered destination's too: its user's ordering is suspended).
    const breaker = this.capacity.admitBreaker(destinationId, this.now());
    if (breaker.kind === 'wait') {
      if (ordered) return this.ordered.suspendForBreaker(record, facts, breaker.untilMs, span);
      const decision = waitForBreaker(facts, breaker.untilMs, this.now(), this.options);
      return this.effects.apply(record, facts, decision, undefined, 'main', span);
    }
    // The main topic never waits long on one destination: one over its rate limit, or still at
    // its bound after `destinationWaitMs`, leaves for the first retry tier. The tiers wait for
    // a slot.
    const limit = destination!.rateLimitPerSecond;
    if (path === 'main') {
      const leave = !rateLimits.hasToken(destinationId, limit)
        ? 'rate_limited'
        : !gate.tryAcquire(destinationId, this.now()) && !(await this.waitForSlot(destinationId))
          ? 'destination_busy'
          : undefined;
      if (leave !== undefined) {
        this.capacity.settleProbe(destinationId, breaker.probe);
        if (ordered) return this.hold({ record, facts, body, span }, destination!);
        const decision = leaveMainTopic(facts, leave, this.now(), this.options);
        return this.effects.apply(record, facts, decision, undefined, 'main', span);
      }
    } else if (!gate.tryAcquire(destinationId, this.now())) {
      await gate.acquire(destinationId);
    }
    // The token is taken last, just before the POST (one taken before a wait for a slot could
    // be spent late, in a burst). The main topic never waits for one: without a token there
    // now, the first tier, where the delivery waits for one holding only its destination's slot.
    if (path === 'main' && !rateLimits.tryTake(destinationId, limit)) {
      gate.release(destinationId, this.now());
      this.capacity.settleProbe(destinationId, breaker.probe);
      if (ordered) return this.hold({ record, facts, body, span }, destination!);
      const decision = leaveMainTopic(facts, 'rate_limited', this.now(), this.options);
      return this.effects.apply(record, facts, decision, undefined, 'main', span);
    }
    if (path === 'retry') await rateLimits.take(destinationId, limit);
    // The destination's slot first: deliveries queued behind a slow destination must not
    // hold slots of the process-wide bound that other destinations need. (A free slot is
    // taken without a promise: most deliveries find one.)
    if (!slots.tryAcquire()) await slots.acquire();
    let attempt: Attempt | undefined;
    try {
      attempt = await this.attempt(facts, body, destination!, admission.webhooks, span);
    } finally {
      slots.release();
      gate.release(destinationId, this.now());
      const verdict = verdictOf(attempt?.answers?.map((answer) => answer.result));
      this.capacity.settleProbe(destinationId, breaker.probe, verdict);
    }
    const { decision, answers } = attempt;
    if (ordered && decision.kind === 'retry') {
      return this.hold(
        { record, facts, body, span, failed: { retry: decision.retry, answers } },
        destination!,
      );
    }
    return this.effects.apply(record, facts, decision, answers, path, span);
  }

  /** An ordered destination's call retried in place; its user's later calls wait behind it. */
  private hold(call: HeldCall, destination: DestinationSettings): Handled {
    return { result: 'retried', hold: this.ordered.hold(call, destination.ordering!) };
  }

  /** Signs and POSTs to every covered webhook at once, then decides; `span` the attempt's. */
  private async attempt(
    facts: DeliveryFacts,
    body: Buffer,
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
    span?: Span,
  ): Promise<Attempt> {
    const startedAt = this.now();
    let headers: Record<string, string>[];
    try {
      const message = { messageId: facts.messageId, nowMs: startedAt };
      headers = this.poster.headers(destination, webhooks, body, message);
    } catch (error) {
      const reason = unsendableReason(error);
      if (reason === undefined) throw error;
      return { decision: deadBeforeAttempt(facts, reason, startedAt) };
    }
    // The request goes out after the records admitted with this one are signed: a socket
    // write between two signatures leaves the hashing cold (bench/DISPATCHER.md).
    await Promise.resolve();
    const answers =
      webhooks.length === 1
        ? [await this.poster.post(facts, webhooks[0], body, headers[0], onlyPost(span))]
        : await Promise.all(
            webhooks.map((webhook, i) =>
              this.poster.post(facts, webhook, body, headers[i], { span }),
            ),
          );
    const decision = decideAttempt({
      facts,
      webhooks,
      results: answers.map((a) => a.result),
      startedAt,
      now: this.now(),
      policy: this.options,
    });
    return { decision, answers };
  }

  /** A record that cannot be read as a delivery is dead-lettered as it is; no ledger row. */
  private async dropInvalid(record: IncomingRecord, reason: string): Promise<Handled> {
    this.logger.warn(`delivery record ${record.partition}@${record.offset} dead: ${reason}`);
    const dead = {
      reason,
      lastStatus: undefined,
      attempts: 0,
      firstAttemptAt: undefined,
      lastAttemptAt: this.now(),
    };
    await this.producer.send([deadRecord(record, dead)]);
    this.metrics.deadLetters.inc({ reason });
    this.metrics.delivery('dead');
    return { result: 'dead' };
  }

  /**
   * A main-topic delivery waits up to `destinationWaitMs` for a slot of its destination, unless
   * the destination has finished nothing for that long already (every request hanging, as
   * before its timeouts make it failing): then no slot will come in time, and waiting would
   * only hold a slot of the partition that other destinations' deliveries need.
   */
  private async waitForSlot(destinationId: string): Promise<boolean> {
    const waitMs = this.options.destinationWaitMs;
    const { gate } = this.capacity;
    if (gate.stalledMs(destinationId, this.now()) >= waitMs) return false;
    return gate.acquireWithin(destinationId, waitMs);
  }
}

/** How an attempt's only POST is told: one shared object when there is no span to carry. */
const ALONE = { alone: true } as const;
function onlyPost(span: Span | undefined): PostContext {
  return span === undefined ? ALONE : { alone: true, span };
}
