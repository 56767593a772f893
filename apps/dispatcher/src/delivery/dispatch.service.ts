import { randomUUID } from 'node:crypto';

import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';

import { delayLabel } from '@app/contracts';
import { BatchProducer, DurableLater, IncomingRecord, OutgoingRecord, Semaphore } from '@app/kafka';
import { DestinationSettings, SettingsCache, WebhookSettings } from '@app/settings';
import { SecretBox, SecretBoxError } from '@app/signing';
import { activeTraceHeaders, tracerOf } from '@app/tracing';

import {
  admit,
  deadBeforeAttempt,
  Decision,
  decideAttempt,
  leaveMainTopic,
  RetryPolicy,
  waitForBreaker,
} from './delivery-decision';
import {
  deadRecord,
  decodeDelivery,
  DeliveryFacts,
  outcomeJson,
  outcomeRecord,
  retryRecord,
  TimedResult,
} from './delivery-record';
import { batchBody } from './batch-former';
import { BatchCall, BatchedOutcome, BatchQueue } from './batch-queue';
import { BreakerObserver } from './breaker-observer';
import { BreakerPolicy, CircuitBreakers, Verdict, verdictOf } from './circuit-breaker';
import { DestinationGate } from './destination-gate';
import {
  addTraceparent,
  endWebhookSpan,
  startWebhookSpan,
  tracedAttempt,
} from './delivery-tracing';
import { DispatcherMetrics } from './dispatcher.metrics';
import { OutcomeBatcher } from './outcome-batcher';
import { DestinationRateLimits } from './rate-limits.service';
import { WebhookClient } from './webhook-client';
import {
  maskedHeaders,
  previousSecretSigns,
  SecretSigners,
  secretSigners,
  Signing,
  sluiceHeaders,
  StaticHeaders,
  UnsignableError,
  webhookHeaders,
} from './webhook-request';

/** Formed batches of one destination that may wait for its slots before calls wait for room. */
const MAX_WAITING_BATCHES = 2;

/** Names the batch request an attempt travelled in, to the receiver and in the ledger. */
export const BATCH_ID_HEADER = 'x-sluice-batch-id';

/** The settings of the dispatch, from the app's configuration. */
export interface DispatchOptions extends RetryPolicy {
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
  readonly now?: () => number;
  /** Uniform in [0, 1); drives the success sample. */
  readonly random?: () => number;
}

export const DISPATCH_OPTIONS = Symbol('DISPATCH_OPTIONS');

/** Where a delivery record was read from. */
export type DeliveryPath = 'main' | 'retry';

/** What became of one delivery record. */
export type DispatchResult = 'delivered' | 'retried' | 'dead' | 'discarded';

/**
 * Delivers one record of the deliveries topic or of a retry tier (docs/architecture.md,
 * "Delivery semantics"): admits it against the current settings, POSTs its bytes, signed, to
 * every webhook it covers at once, lets the pure functions of `delivery-decision.ts` decide
 * what becomes of it, and acts on that decision in one place (`apply`). Resolves only once
 * what it produced was acknowledged, so the transport commits after that.
 */
@Injectable()
export class DispatchService implements OnModuleDestroy {
  private readonly logger = new Logger(DispatchService.name);
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly slots: Semaphore;
  private readonly gate: DestinationGate;
  private readonly breakers: CircuitBreakers;
  private readonly outcomes: OutcomeBatcher;
  /** Calls of batching destinations, gathering into batches (batched delivery). */
  private readonly batches: BatchQueue<DispatchResult>;
  /** Signers of opened shared secrets by their ciphertext; a settings reload makes new arrays. */
  private readonly signers = new WeakMap<object, SecretSigners>();
  /**
   * Static headers, opened, less those that cannot be sent (saved before the admin refused
   * them); opened once per settings snapshot.
   */
  private readonly staticHeaders = new StaticHeaders(
    (message) => this.logger.warn(message),
    (sealed) => this.options.secrets.openText(sealed),
  );
  /** Undefined when traces are off: then nothing below builds a span or an attribute. */
  private readonly tracer = tracerOf('dispatcher');

  constructor(
    @Inject(SettingsCache) private readonly settings: Pick<SettingsCache, 'destination'>,
    @Inject(BatchProducer) private readonly producer: Pick<BatchProducer, 'send'>,
    @Inject(WebhookClient) private readonly client: Pick<WebhookClient, 'post'>,
    private readonly metrics: DispatcherMetrics,
    @Inject(DISPATCH_OPTIONS) private readonly options: DispatchOptions,
    @Inject(BreakerObserver) private readonly breakerObserver: Pick<BreakerObserver, 'changed'>,
    private readonly rateLimits: DestinationRateLimits,
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.slots = new Semaphore(options.maxInFlight);
    this.gate = new DestinationGate(options.maxInFlightPerDestination);
    this.breakers = new CircuitBreakers(options.breaker);
    this.outcomes = new OutcomeBatcher(producer);
    this.batches = new BatchQueue(
      (calls, started) => this.sendBatch(calls, started),
      MAX_WAITING_BATCHES,
    );
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
    const { result, ledger } = await this.traced(record, path);
    await ledger?.durable;
    return typeof result === 'function' ? result() : result;
  }

  /**
   * The transports' handler: as {@link dispatch}, but a delivery whose only wait left is its
   * ledger outcome (gathered with other deliveries' into one record) answers at once with
   * that wait, so it holds no slot while the outcome gathers; its offset still waits for it.
   */
  async handle(record: IncomingRecord, path: DeliveryPath): Promise<DurableLater | undefined> {
    return (await this.traced(record, path)).ledger;
  }

  /** {@link run} in an attempt's span when traces are on. */
  private traced(record: IncomingRecord, path: DeliveryPath): Promise<Handled> {
    const tracer = this.tracer;
    if (tracer === undefined) return this.run(record, path);
    return tracedAttempt(tracer, record, () => this.run(record, path));
  }

  private async run(record: IncomingRecord, path: DeliveryPath): Promise<Handled> {
    const decoded = decodeDelivery(record);
    if (decoded.kind === 'invalid') return this.dropInvalid(record, decoded.reason);
    const { facts, body } = decoded;
    const destination = this.settings.destination(facts.destinationId);
    const admission = admit(facts, destination, this.now());
    if (admission.kind === 'decided') return this.apply(record, facts, admission.decision);
    if (destination!.batching) return this.batch(record, facts, body, destination!, path);
    const destinationId = facts.destinationId;
    // An open breaker: no attempt and no slot; the delivery waits on a tier for its probe.
    const { admission: breaker, change } = this.breakers.admit(destinationId, this.now());
    if (change) this.breakerObserver.changed(change);
    if (breaker.kind === 'wait') {
      const decision = waitForBreaker(facts, breaker.untilMs, this.now(), this.options);
      return this.apply(record, facts, decision);
    }
    // The main topic never waits long on one destination: one over its rate limit, or still at
    // its bound after `destinationWaitMs`, leaves for the first retry tier. The tiers wait for
    // a slot.
    const limit = destination!.rateLimitPerSecond;
    if (path === 'main') {
      const leave = !this.rateLimits.hasToken(destinationId, limit)
        ? 'rate_limited'
        : !this.gate.tryAcquire(destinationId, this.now()) &&
            !(await this.waitForSlot(destinationId))
          ? 'destination_busy'
          : undefined;
      if (leave !== undefined) {
        this.settleProbe(destinationId, breaker.probe);
        return this.apply(record, facts, leaveMainTopic(facts, leave, this.now(), this.options));
      }
    } else if (!this.gate.tryAcquire(destinationId, this.now())) {
      await this.gate.acquire(destinationId);
    }
    // The token is taken last, just before the POST (one taken before a wait for a slot could
    // be spent late, in a burst). The main topic never waits for one: without a token there
    // now, the first tier, where the delivery waits for one holding only its destination's slot.
    if (path === 'main' && !this.rateLimits.tryTake(destinationId, limit)) {
      this.gate.release(destinationId, this.now());
      this.settleProbe(destinationId, breaker.probe);
      const decision = leaveMainTopic(facts, 'rate_limited', this.now(), this.options);
      return this.apply(record, facts, decision);
    }
    if (path === 'retry') await this.rateLimits.take(destinationId, limit);
    // The destination's slot first: deliveries queued behind a slow destination must not
    // hold slots of the process-wide bound that other destinations need. (A free slot is
    // taken without a promise: most deliveries find one.)
    if (!this.slots.tryAcquire()) await this.slots.acquire();
    let attempt: Attempt | undefined;
    try {
      attempt = await this.attempt(facts, body, destination!, admission.webhooks);
    } finally {
      this.slots.release();
      this.gate.release(destinationId, this.now());
      const verdict = verdictOf(attempt?.answers?.map((answer) => answer.result));
      this.settleProbe(destinationId, breaker.probe, verdict);
    }
    return this.apply(record, facts, attempt.decision, attempt.answers, path);
  }

  /** Signs and POSTs to every covered webhook at once, then decides. */
  private async attempt(
    facts: DeliveryFacts,
    body: Buffer,
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
  ): Promise<Attempt> {
    const startedAt = this.now();
    let headers: Record<string, string>[];
    try {
      const message = { messageId: facts.messageId, nowMs: startedAt };
      const signed = sluiceHeaders(body, this.signing(destination, startedAt), message);
      headers = webhooks.map((webhook) => webhookHeaders(this.staticHeaders.of(webhook), signed));
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
        ? [await this.post(facts, webhooks[0], body, headers[0])]
        : await Promise.all(
            webhooks.map((webhook, i) => this.post(facts, webhook, body, headers[i])),
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

  /**
   * Acts on a decision, the one place that does: produces the retry or dead record (and a
   * delete's outcome) and waits for Kafka's acknowledgement, hands the ledger's outcome to the
   * batcher (its acknowledgement is the `ledger` wait), then counts and logs.
   */
  private async apply(
    record: IncomingRecord,
    facts: DeliveryFacts,
    decision: Decision,
    answers?: readonly TimedResult[],
    path: DeliveryPath = 'main',
  ): Promise<Handled> {
    const now = this.now();
    const records: OutgoingRecord[] = [];
    // The batcher's promise is handled already: the send below may throw before anyone waits.
    const ledger = this.effects(record, facts, decision, records, answers, now);
    if (records.length > 0) await this.producer.send(records);
    return { result: this.count(facts, decision, record, path, now), ledger };
  }

  /**
   * Adds to `records` what a decision produces (the retry or dead record, a delete's outcome)
   * and hands the ledger's outcome to the batcher, answering its wait.
   */
  private effects(
    record: IncomingRecord,
    facts: DeliveryFacts,
    decision: Decision,
    records: OutgoingRecord[],
    answers: readonly TimedResult[] | undefined,
    now: number,
    batchId?: string,
  ): DurableLater | undefined {
    if (decision.kind === 'retry') {
      // The next attempt's span is the child of this one's.
      const trace = this.tracer ? activeTraceHeaders() : undefined;
      records.push(retryRecord(record, decision.retry, trace));
    }
    if (decision.kind === 'dead') records.push(deadRecord(record, decision.dead));
    const outcome = this.publishesOutcome(facts, decision)
      ? outcomeJson(facts, decision, answers, now, batchId)
      : undefined;
    // A delete's outcome is a record of its own, which the deletion receipts read.
    if (outcome && facts.type === 'delete') records.push(outcomeRecord(record, facts, outcome));
    return outcome && facts.type !== 'delete' ? this.outcomes.add(outcome) : undefined;
  }

  /**
   * A call of a batching destination joins its batch; its handler answers with the batch's
   * wait (its offset waits for the batch's answer). A main-topic call whose destination's
   * batches are backed up past `destinationWaitMs` leaves for the first tier instead.
   */
  private async batch(
    record: IncomingRecord,
    facts: DeliveryFacts,
    body: Buffer,
    destination: DestinationSettings,
    path: DeliveryPath,
  ): Promise<Handled> {
    const call = { record, facts, body, path };
    const waitMs = this.options.destinationWaitMs;
    const queued = await this.batches.add(call, destination.batching!, waitMs);
    if (queued.kind === 'queued') return { result: queued.result, ledger: queued.durable };
    const decision = leaveMainTopic(facts, 'destination_busy', this.now(), this.options);
    return this.apply(record, facts, decision);
  }

  /**
   * Sends one formed batch and answers each call's outcome; rejects when Kafka did not
   * acknowledge what the calls produced (their records are handled again).
   */
  private async sendBatch(
    calls: BatchCall[],
    started: () => void,
  ): Promise<BatchedOutcome<DispatchResult>[]> {
    try {
      const { decisions, answers, batchId } = await this.attemptBatch(calls, started);
      const now = this.now();
      const records: OutgoingRecord[] = [];
      const ledgers = calls.map((call, i) =>
        this.effects(call.record, call.facts, decisions[i], records, answers, now, batchId),
      );
      if (records.length > 0) await this.producer.send(records);
      const results = calls.map((call, i) =>
        this.count(call.facts, decisions[i], call.record, call.path, now),
      );
      if (answers !== undefined) {
        this.metrics.batches.inc({ result: results[0] });
        this.metrics.batchedCalls.inc(calls.length);
      }
      return results.map((result, i) => ({ result, ledger: ledgers[i] }));
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
  private async attemptBatch(
    calls: readonly BatchCall[],
    started: () => void,
  ): Promise<BatchAttempt> {
    const { facts } = calls[0];
    const destinationId = facts.destinationId;
    if (!this.gate.tryAcquire(destinationId, this.now())) await this.gate.acquire(destinationId);
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
      const { admission: breaker, change } = this.breakers.admit(destinationId, now);
      if (change) this.breakerObserver.changed(change);
      if (breaker.kind === 'wait') {
        const wait = (f: DeliveryFacts) => waitForBreaker(f, breaker.untilMs, now, this.options);
        return { decisions: calls.map((call) => wait(call.facts)) };
      }
      probe = breaker.probe;
      await this.rateLimits.take(destinationId, destination!.rateLimitPerSecond);
      if (!this.slots.tryAcquire()) await this.slots.acquire();
      try {
        const attempt = await this.postBatch(calls, destination!, admission.webhooks);
        verdict = verdictOf(attempt.answers?.map((answer) => answer.result));
        return attempt;
      } finally {
        this.slots.release();
      }
    } finally {
      this.gate.release(destinationId, this.now());
      this.settleProbe(destinationId, probe, verdict);
    }
  }

  /** Signs the batch's body as a whole and POSTs it to every covered webhook at once. */
  private async postBatch(
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
      const signed = sluiceHeaders(body, this.signing(destination, startedAt), message);
      const sent = { ...signed, [BATCH_ID_HEADER]: batchId };
      headers = webhooks.map((webhook) => webhookHeaders(this.staticHeaders.of(webhook), sent));
    } catch (error) {
      const reason = unsendableReason(error);
      if (reason === undefined) throw error;
      const dead = (f: DeliveryFacts) => deadBeforeAttempt(f, reason, startedAt);
      return { decisions: calls.map((call) => dead(call.facts)) };
    }
    const label = `batch ${batchId} (${calls.length} call(s)) to destination ${destination.id}`;
    const answers = await Promise.all(
      webhooks.map((webhook, i) => this.post(calls[0].facts, webhook, body, headers[i], label)),
    );
    const now = this.now();
    const results = answers.map((answer) => answer.result);
    const decisions = calls.map((call) =>
      decideAttempt({ facts: call.facts, webhooks, results, startedAt, now, policy: this.options }),
    );
    return { decisions, answers, batchId };
  }

  /** Counts and logs what became of a delivery. */
  private count(
    facts: DeliveryFacts,
    decision: Decision,
    record: IncomingRecord,
    path: DeliveryPath,
    now: number,
  ): DispatchResult {
    switch (decision.kind) {
      case 'delivered': {
        const since = path === 'main' ? record.timestamp : (facts.firstAttemptAt ?? now);
        this.metrics.delivered((now - since) / 1000);
        this.metrics.delivery('delivered', facts.destinationId);
        return 'delivered';
      }
      case 'retry':
        this.metrics.retries.inc({ tier: delayLabel(decision.retry.delaySeconds) });
        this.metrics.delivery('retried', facts.destinationId);
        return 'retried';
      case 'dead':
        this.logger.warn(
          `${describe(facts)}: dead after ${decision.dead.attempts} attempt(s): ${decision.dead.reason}`,
        );
        this.metrics.deadLetters.inc({ reason: decision.dead.reason });
        this.metrics.delivery('dead', facts.destinationId);
        return 'dead';
      case 'discarded':
        this.logger.warn(`${describe(facts)}: discarded, ${decision.reason}`);
        this.metrics.discarded.inc({ reason: decision.reason });
        this.metrics.delivery('discarded', facts.destinationId);
        return 'discarded';
    }
  }

  /**
   * Every outcome goes to the ledger but a first-try success, which is sampled
   * (`ledgerSuccessSample`): a delivery that has been on a retry tier already has a row that
   * its success must close, and a delete's deletion request waits for its outcome.
   */
  private publishesOutcome(facts: DeliveryFacts, decision: Decision): boolean {
    if (decision.kind !== 'delivered' || facts.type === 'delete') return true;
    if (facts.firstAttemptAt !== undefined) return true;
    const sample = this.options.ledgerSuccessSample;
    return sample >= 1 || (sample > 0 && this.random() < sample);
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

  /** Counts an attempt's verdict in its destination's breaker (a probe's place is freed). */
  private settleProbe(destinationId: string, probe: boolean, verdict: Verdict = 'none'): void {
    if (!probe && verdict === 'none') return;
    const change = this.breakers.record(destinationId, verdict, probe, this.now());
    if (change) this.breakerObserver.changed(change);
  }

  /**
   * A main-topic delivery waits up to `destinationWaitMs` for a slot of its destination, unless
   * the destination has finished nothing for that long already (every request hanging, as
   * before its timeouts make it failing): then no slot will come in time, and waiting would
   * only hold a slot of the partition that other destinations' deliveries need.
   */
  private async waitForSlot(destinationId: string): Promise<boolean> {
    const waitMs = this.options.destinationWaitMs;
    if (this.gate.stalledMs(destinationId, this.now()) >= waitMs) return false;
    return this.gate.acquireWithin(destinationId, waitMs);
  }

  /** POSTs to one webhook; `batch` names a batch request in the log. */
  private async post(
    facts: DeliveryFacts,
    webhook: WebhookSettings,
    body: Buffer,
    headers: Record<string, string>,
    batch?: string,
  ): Promise<TimedResult> {
    this.metrics.requestStarted();
    const span = this.tracer && startWebhookSpan(this.tracer, webhook.url, webhook.id);
    // The receiver continues the trace when its destination asks for the header.
    if (this.tracer && this.settings.destination(facts.destinationId)?.sendTraceparent) {
      addTraceparent(headers, span);
    }
    const startedAt = performance.now();
    const result = await this.client.post(webhook.url, body, headers);
    const latencyMs = performance.now() - startedAt;
    if (span) endWebhookSpan(span, result, latencyMs);
    this.metrics.requestEnded(result.kind, result.status, latencyMs / 1000);
    if (result.kind !== 'success') {
      this.logger.warn(
        `${batch ?? describe(facts)} to webhook ${webhook.id}, attempt ${facts.attempt}: ${result.kind} ` +
          `${result.reason} (${result.detail})`,
      );
    }
    // A failure keeps what was sent (values masked) for the ledger; a success needs none.
    return result.kind === 'success'
      ? { webhookId: webhook.id, result, latencyMs }
      : { webhookId: webhook.id, result, latencyMs, requestHeaders: maskedHeaders(headers) };
  }

  /**
   * How a delivery to `destination` is signed at `nowMs`: its mode, its secret and, while a
   * rotation's overlap lasts, the previous secret.
   */
  private signing(destination: DestinationSettings, nowMs: number): Signing {
    const mode = destination.signatureMode ?? 'x-signature';
    const current = this.signer(destination.sharedSecretCiphertext);
    if (current === undefined) return { mode };
    const previous = previousSecretSigns(destination.previousSecretExpiresAt, nowMs)
      ? this.signer(destination.previousSecretCiphertext)
      : undefined;
    return { mode, current, previous };
  }

  /** The signers of a shared secret, opened once per settings snapshot. */
  private signer(ciphertext: Readonly<Uint8Array> | null | undefined): SecretSigners | undefined {
    if (!ciphertext) return undefined;
    let signer = this.signers.get(ciphertext);
    if (signer === undefined) {
      signer = secretSigners(this.options.secrets.open(ciphertext));
      this.signers.set(ciphertext, signer);
    }
    return signer;
  }
}

/**
 * What a delivery came to (for a batched call, once its batch was answered), and the wait for
 * its ledger outcome when one was gathered (for a batched call, for its batch).
 */
interface Handled {
  readonly result: DispatchResult | (() => Promise<DispatchResult>);
  readonly ledger?: DurableLater;
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

/** An attempt's decision, with each webhook's answer when POSTs were made. */
interface Attempt {
  readonly decision: Decision;
  readonly answers?: readonly TimedResult[];
}

function describe(facts: DeliveryFacts): string {
  return `delivery of message ${facts.messageId ?? '(none)'} to destination ${facts.destinationId}`;
}

/**
 * Why a delivery cannot be signed or sent, or undefined for an unexpected error: a secret or
 * static header value sealed under another key (the dispatcher's SECRETS_ENCRYPTION_KEY
 * differs from the admin app's), or a standard-webhooks secret that is not whsec_ (the admin
 * API refuses that). Such a delivery is dead-lettered, so one destination never blocks a
 * partition; it is replayable once fixed.
 */
function unsendableReason(error: unknown): 'secret_unreadable' | 'secret_not_whsec' | undefined {
  if (error instanceof SecretBoxError) return 'secret_unreadable';
  if (error instanceof UnsignableError) return error.code;
  return undefined;
}
