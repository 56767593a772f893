import { randomUUID } from 'node:crypto';

import { Logger } from '@nestjs/common';

import { DurableLater, IncomingRecord } from '@app/kafka';
import { DestinationSettings, SettingsCache, WebhookSettings } from '@app/settings';
import { Span } from '@app/tracing';

import {
  admit,
  deadBeforeAttempt,
  Decision,
  decideBatch,
  leaveMainTopic,
  RetryPolicy,
  waitForBreaker,
} from './delivery-decision';
import { batchBody } from './batch-former';
import { BatchCall, BatchedOutcome, BatchQueue } from './batch-queue';
import { Verdict, verdictOf } from './circuit-breaker';
import { DeliveryCapacity } from './delivery-capacity';
import { DeliveryEffects, DeliveryPath, DispatchResult, Handled } from './delivery-effects';
import { DeliveryFacts, TimedResult } from './delivery-record';
import { BatchFacts, tracedBatch } from './delivery-tracing';
import { DispatcherMetrics } from './dispatcher.metrics';
import { unsendableReason, WebhookPoster } from './webhook-poster';

/** Formed batches of one destination that may wait for its slots before calls wait for room. */
const MAX_WAITING_BATCHES = 2;

/** Names the batch request an attempt travelled in, to the receiver and in the ledger. */
export const BATCH_ID_HEADER = 'x-sluice-batch-id';

/** What batched delivery needs of the dispatch's settings. */
export interface BatchDeliveryOptions extends RetryPolicy {
  /** Longest a main-topic call waits for room in its destination's batches. */
  readonly destinationWaitMs: number;
}

/**
 * Batched delivery (docs/architecture.md, "Batched delivery"): a call of a batching destination
 * joins its batch, and each formed batch goes as one request, signed as a whole, bounded by its
 * destination's slots, breaker and rate limit as one request is. The batch's answer decides
 * each call by the single-call rules.
 */
export class BatchDelivery {
  private readonly queue: BatchQueue<DispatchResult>;

  constructor(
    private readonly settings: Pick<SettingsCache, 'destination'>,
    private readonly capacity: DeliveryCapacity,
    private readonly poster: WebhookPoster,
    private readonly effects: DeliveryEffects,
    private readonly metrics: DispatcherMetrics,
    private readonly logger: Logger,
    private readonly options: BatchDeliveryOptions,
    private readonly now: () => number,
  ) {
    this.queue = new BatchQueue((calls, started) => this.send(calls, started), MAX_WAITING_BATCHES);
  }

  /**
   * A call joins its batch; its handler answers with the batch's wait (its offset waits for
   * the batch's answer). A main-topic call whose destination's batches are backed up past
   * `destinationWaitMs` leaves for the first tier instead.
   */
  async add(call: BatchCall, destination: DestinationSettings): Promise<Handled> {
    const waitMs = this.options.destinationWaitMs;
    const queued = await this.queue.add(call, destination.batching!, waitMs);
    if (queued.kind === 'queued') return { result: queued.result, ledger: queued.durable };
    const { record, facts, span } = call;
    const decision = leaveMainTopic(facts, 'destination_busy', this.now(), this.options);
    return this.effects.apply(record, facts, decision, undefined, 'main', span);
  }

  /**
   * A call of a batching destination whose batches have room joins its batch at once, answering
   * the batch's wait without a promise of its own (most of a batching destination's calls);
   * undefined for any other record, which the dispatch handles as ever. The dispatch decoded
   * the record and read its destination already.
   */
  join(
    record: IncomingRecord,
    decoded: { readonly facts: DeliveryFacts; readonly body: Buffer },
    path: DeliveryPath,
    destination: DestinationSettings,
  ): DurableLater | undefined {
    if (!destination.batching) return undefined;
    const { facts, body } = decoded;
    if (admit(facts, destination, this.now()).kind !== 'send') return undefined;
    return this.queue.join({ record, facts, body, path }, destination.batching);
  }

  /** Closing: batches still forming go now, and later ones without waiting to fill. */
  close(): void {
    this.queue.close();
  }

  /**
   * Sends one formed batch and answers each call's outcome; rejects when Kafka did not
   * acknowledge what the calls produced (their records are handled again).
   */
  private async send(
    calls: BatchCall[],
    started: () => void,
  ): Promise<BatchedOutcome<DispatchResult>[]> {
    try {
      const { decisions, answers, batchId } = await this.attempt(calls, started);
      // Named fields, not a spread of the call: a fixed shape, made once a call.
      const decided = calls.map(({ record, facts, path, span }, i) => ({
        record,
        facts,
        path,
        span,
        decision: decisions[i],
      }));
      const outcomes = await this.effects.applyAll(decided, answers, batchId);
      if (answers !== undefined) {
        this.metrics.batches.inc({ result: outcomes[0].result });
        this.metrics.batchedCalls.inc(calls.length);
      }
      return outcomes;
    } catch (error) {
      this.logger.warn(`batch of ${calls.length} call(s) not settled: ${String(error)}`);
      throw error;
    }
  }

  /**
   * One attempt of a batch, as one request: waits for a slot of its destination, reads the
   * destination as it is now, lets its breaker and rate limit (one token a request) decide, and
   * decides each call from the answers. The calls share their webhooks (the batch's key).
   */
  private async attempt(calls: readonly BatchCall[], started: () => void): Promise<BatchAttempt> {
    const { facts } = calls[0];
    const destinationId = facts.destinationId;
    const { gate, slots } = this.capacity;
    if (!gate.tryAcquire(destinationId, this.now())) await gate.acquire(destinationId);
    started();
    let probe = false;
    let verdict: Verdict = 'none';
    try {
      const destination = this.settings.destination(destinationId);
      const now = this.now();
      const admission = admit(facts, destination, now);
      if (admission.kind === 'decided') {
        return { decisions: calls.map((call) => decidedNow(call.facts, destination, now)) };
      }
      const breaker = this.capacity.admitBreaker(destinationId, now);
      if (breaker.kind === 'wait') {
        const wait = (f: DeliveryFacts) => waitForBreaker(f, breaker.untilMs, now, this.options);
        return { decisions: calls.map((call) => wait(call.facts)) };
      }
      probe = breaker.probe;
      await this.capacity.rateLimits.take(destinationId, destination!.rateLimitPerSecond);
      if (!slots.tryAcquire()) await slots.acquire();
      try {
        const attempt = await this.post(calls, destination!, admission.webhooks);
        verdict = verdictOf(attempt.answers?.map((answer) => answer.result));
        return attempt;
      } finally {
        slots.release();
      }
    } finally {
      gate.release(destinationId, this.now());
      this.capacity.settleProbe(destinationId, probe, verdict);
    }
  }

  /** Signs the batch's body as a whole and POSTs it to every covered webhook at once. */
  private async post(
    calls: readonly BatchCall[],
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
  ): Promise<BatchAttempt> {
    const startedAt = this.now();
    const body = batchBody(calls.map((call) => call.body));
    const batchId = randomUUID();
    let headers: Record<string, string>[];
    try {
      // In standard-webhooks mode a batch's webhook-id is its batch id (a new one per request).
      const message = { messageId: batchId, nowMs: startedAt };
      const extra = { [BATCH_ID_HEADER]: batchId };
      headers = this.poster.headers(destination, webhooks, body, message, extra);
    } catch (error) {
      const reason = unsendableReason(error);
      if (reason === undefined) throw error;
      const dead = (f: DeliveryFacts) => deadBeforeAttempt(f, reason, startedAt);
      return { decisions: calls.map((call) => dead(call.facts)) };
    }
    const label = `batch ${batchId} (${calls.length} call(s)) to destination ${destination.id}`;
    const alone = webhooks.length === 1;
    const send = (span: Span | undefined) =>
      Promise.all(
        webhooks.map((webhook, i) =>
          this.poster.post(calls[0].facts, webhook, body, headers[i], {
            batch: label,
            alone,
            span,
          }),
        ),
      );
    const answers = await this.traced(
      calls,
      { batchId, destinationId: destination.id, alone },
      send,
    );
    const now = this.now();
    const results = answers.map((answer) => answer.result);
    const decisions = decideBatch(calls, {
      webhooks,
      results,
      startedAt,
      now,
      policy: this.options,
    });
    return { decisions, answers, batchId };
  }

  /** `send` in the batch's span when traces are on and some of its calls are sampled. */
  private traced<T>(
    calls: readonly BatchCall[],
    facts: Omit<BatchFacts, 'calls'>,
    send: (span: Span | undefined) => Promise<T>,
  ): Promise<T> {
    const tracer = this.poster.tracer;
    if (tracer === undefined) return send(undefined);
    const attempts: Span[] = [];
    for (const { span } of calls) if (span?.isRecording()) attempts.push(span);
    return tracedBatch(tracer, attempts, { ...facts, calls: calls.length }, send);
  }
}

/** A batch's attempt: each call's decision, with the answers and batch id when it was sent. */
interface BatchAttempt {
  readonly decisions: readonly Decision[];
  readonly answers?: readonly TimedResult[];
  readonly batchId?: string;
}

/** A call whose destination no longer takes it, as `admit` decides (the batch shares it). */
function decidedNow(
  facts: DeliveryFacts,
  destination: DestinationSettings | undefined,
  now: number,
): Decision {
  const admission = admit(facts, destination, now);
  return admission.kind === 'decided'
    ? admission.decision
    : deadBeforeAttempt(facts, 'webhooks_removed', now);
}
