import { Inject, Injectable, Logger } from '@nestjs/common';

import { delayLabel, DeliveryResult } from '@app/contracts';
import { BatchProducer, IncomingRecord, OutgoingRecord, Semaphore } from '@app/kafka';
import { DestinationSettings, SettingsCache, WebhookSettings } from '@app/settings';
import { HmacSha1, SecretBox, SecretBoxError } from '@app/signing';

import {
  DeadLetter,
  decodeDelivery,
  deadRecord,
  DeliveryFacts,
  outcomeRecord,
  retryRecord,
} from './delivery-record';
import { DestinationGate } from './destination-gate';
import { DispatcherMetrics } from './dispatcher.metrics';
import { planRetry } from './retry-plan';
import { AttemptResult, WebhookClient } from './webhook-client';

/** The settings of the dispatch, from the app's configuration. */
export interface DispatchOptions {
  /** Retry delays in seconds, in ladder order; the last repeats. */
  readonly retryDelaysSeconds: readonly number[];
  readonly retryWindowMs: number;
  readonly maxInFlight: number;
  readonly maxInFlightPerDestination: number;
  readonly failingAfter: number;
  /** Longest a main-topic delivery waits for a slot of its destination. */
  readonly destinationWaitMs: number;
  readonly secrets: SecretBox;
  readonly now?: () => number;
}

export const DISPATCH_OPTIONS = Symbol('DISPATCH_OPTIONS');

/** Where a delivery record was read from. */
export type DeliveryPath = 'main' | 'retry';

/** What became of one delivery record. */
export type DispatchResult = 'delivered' | 'retried' | 'dead' | 'discarded';

/** The HTTP headers every webhook request carries; static headers cannot replace them. */
export const USER_AGENT = 'Sluice/1.0';
export const SIGNATURE_HEADER = 'x-signature';

/** Call types whose outcome is published for someone waiting on it. */
const OUTCOME_TYPES: ReadonlySet<string> = new Set(['delete']);

/**
 * Delivers one record of the deliveries topic or of a retry tier (docs/architecture.md, "Delivery semantics"): POSTs
 * its bytes, signed, to every webhook it covers at once; any 2xx ends it; otherwise the
 * webhooks that failed in a retryable way go together to the next retry tier, or, when none
 * did or the window closes, the delivery goes to the dead-letter topic. Resolves only once
 * what it produced was acknowledged, so the transport commits after that.
 */
@Injectable()
export class DispatchService {
  private readonly logger = new Logger(DispatchService.name);
  private readonly now: () => number;
  private readonly slots: Semaphore;
  private readonly gate: DestinationGate;
  /** Signers of opened shared secrets by their ciphertext; a settings reload makes new arrays. */
  private readonly signers = new WeakMap<object, HmacSha1>();

  constructor(
    @Inject(SettingsCache) private readonly settings: Pick<SettingsCache, 'destination'>,
    @Inject(BatchProducer) private readonly producer: Pick<BatchProducer, 'send'>,
    @Inject(WebhookClient) private readonly client: Pick<WebhookClient, 'post'>,
    private readonly metrics: DispatcherMetrics,
    @Inject(DISPATCH_OPTIONS) private readonly options: DispatchOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.slots = new Semaphore(options.maxInFlight);
    this.gate = new DestinationGate(options.maxInFlightPerDestination, options.failingAfter);
  }

  /**
   * Handles one delivery record.
   * @throws when Kafka did not acknowledge what the outcome needs produced (the record is
   *   tried again)
   */
  async dispatch(record: IncomingRecord, path: DeliveryPath): Promise<DispatchResult> {
    const decoded = decodeDelivery(record);
    if (decoded.kind === 'invalid') {
      this.logger.warn(
        `delivery record ${record.partition}@${record.offset} dead: ${decoded.reason}`,
      );
      return this.die(record, undefined, {
        reason: decoded.reason,
        lastStatus: undefined,
        attempts: 0,
        firstAttemptAt: undefined,
        lastAttemptAt: this.now(),
      });
    }
    const { facts, body } = decoded;
    const destination = this.settings.destination(facts.destinationId);
    if (!destination || !destination.enabled) {
      return this.discard(
        record,
        facts,
        destination ? 'destination_disabled' : 'destination_deleted',
      );
    }
    const webhooks = covered(destination, facts.webhookIds);
    if (webhooks.length === 0) {
      this.logger.warn(`${describe(facts)}: every webhook it covered was removed; dead`);
      return this.die(record, facts, {
        reason: 'webhooks_removed',
        lastStatus: undefined,
        attempts: facts.attempt - 1,
        firstAttemptAt: facts.firstAttemptAt,
        lastAttemptAt: this.now(),
      });
    }
    // The main topic never waits long on one destination: for a failing one, or one still at
    // its bound after `destinationWaitMs`, the delivery leaves for the first retry tier. The
    // tiers wait for a slot.
    if (path === 'main') {
      if (this.gate.isFailing(destination.id)) {
        return this.leaveMainTopic(record, facts, 'destination_failing');
      }
      if (
        !this.gate.tryAcquire(destination.id, this.now()) &&
        !(await this.waitForSlot(destination.id))
      ) {
        return this.leaveMainTopic(record, facts, 'destination_busy');
      }
    } else if (!this.gate.tryAcquire(destination.id, this.now())) {
      await this.gate.acquire(destination.id);
    }
    // The destination's slot first: deliveries queued behind a slow destination must not
    // hold slots of the process-wide bound that other destinations need. (A free slot is
    // taken without a promise: most deliveries find one.)
    if (!this.slots.tryAcquire()) await this.slots.acquire();
    try {
      return await this.attempt(record, facts, body, destination, webhooks, path);
    } finally {
      this.slots.release();
      this.gate.release(destination.id, this.now());
    }
  }

  private async attempt(
    record: IncomingRecord,
    facts: DeliveryFacts,
    body: Buffer,
    destination: DestinationSettings,
    webhooks: readonly WebhookSettings[],
    path: DeliveryPath,
  ): Promise<DispatchResult> {
    const startedAt = this.now();
    const firstAttemptAt = facts.firstAttemptAt ?? startedAt;
    let signed: Record<string, string>;
    try {
      signed = this.baseHeaders(destination, body);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      // Sealed under another key (SECRETS_ENCRYPTION_KEY differs from the admin app's):
      // dead-lettered, so one destination never blocks a partition; replayable once fixed.
      this.logger.error(`${describe(facts)}: its shared secret cannot be opened with this key`);
      return this.die(record, facts, {
        reason: 'secret_unreadable',
        lastStatus: undefined,
        attempts: facts.attempt - 1,
        firstAttemptAt: facts.firstAttemptAt,
        lastAttemptAt: startedAt,
      });
    }
    // The request goes out after the records admitted with this one are signed: a socket
    // write between two signatures (loopback or not, the kernel's share is large) leaves the
    // hashing cold, which measured several times slower than signing a batch back to back.
    await Promise.resolve();
    const results =
      webhooks.length === 1
        ? [await this.post(facts, webhooks[0], body, signed)]
        : await Promise.all(webhooks.map((webhook) => this.post(facts, webhook, body, signed)));
    const now = this.now();
    if (results.some((r) => r.kind === 'success')) {
      this.gate.succeeded(destination.id);
      this.metrics.delivered((now - (path === 'main' ? record.timestamp : firstAttemptAt)) / 1000);
      return this.finish(record, facts, 'delivered', { attempts: facts.attempt, at: now });
    }
    const retryable = webhooks.filter((_, i) => results[i].kind === 'retryable');
    const lastStatus = results.map((r) => r.status).find((s) => s !== undefined);
    if (retryable.length === 0) {
      return this.die(record, facts, {
        reason: results[0].kind === 'permanent' ? results[0].reason : 'permanent_failure',
        lastStatus,
        attempts: facts.attempt,
        firstAttemptAt,
        lastAttemptAt: now,
      });
    }
    this.gate.failed(destination.id);
    const retryAfters = results.flatMap((r) =>
      r.kind === 'retryable' && r.retryAfterMs !== undefined ? [r.retryAfterMs] : [],
    );
    const plan = planRetry({
      ladder: this.options.retryDelaysSeconds,
      failures: facts.attempt,
      now,
      firstAttemptAt,
      windowMs: this.options.retryWindowMs,
      retryAfterMs: retryAfters.length > 0 ? Math.max(...retryAfters) : undefined,
    });
    const reason = results.find((r) => r.kind === 'retryable')!.reason;
    if (plan.kind === 'window_closed') {
      return this.die(record, facts, {
        reason: 'retry_window_closed',
        lastStatus,
        attempts: facts.attempt,
        firstAttemptAt,
        lastAttemptAt: now,
      });
    }
    return this.retry(
      retryRecord(record, {
        delaySeconds: plan.delaySeconds,
        attempt: facts.attempt + 1,
        firstAttemptAt,
        dueAt: plan.dueAt,
        webhookIds: retryable.map((w) => w.id),
        reason,
        lastStatus,
      }),
      plan.delaySeconds,
    );
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

  /** A delivery goes to the first tier without an attempt on the main topic. */
  private leaveMainTopic(
    record: IncomingRecord,
    facts: DeliveryFacts,
    reason: 'destination_failing' | 'destination_busy',
  ): Promise<DispatchResult> {
    const now = this.now();
    const delaySeconds = this.options.retryDelaysSeconds[0];
    return this.retry(
      retryRecord(record, {
        delaySeconds,
        attempt: facts.attempt,
        firstAttemptAt: facts.firstAttemptAt ?? now,
        dueAt: now + delaySeconds * 1000,
        webhookIds: facts.webhookIds,
        reason,
        lastStatus: undefined,
      }),
      delaySeconds,
    );
  }

  private async post(
    facts: DeliveryFacts,
    webhook: WebhookSettings,
    body: Buffer,
    signed: Record<string, string>,
  ): Promise<AttemptResult> {
    const headers = { ...webhook.headers, ...signed };
    this.metrics.requestStarted();
    const startedAt = performance.now();
    const result = await this.client.post(webhook.url, body, headers);
    this.metrics.requestEnded(result.kind, result.status, (performance.now() - startedAt) / 1000);
    if (result.kind !== 'success') {
      this.logger.warn(
        `${describe(facts)} to webhook ${webhook.id}, attempt ${facts.attempt}: ${result.kind} ` +
          `${result.reason} (${result.detail})`,
      );
    }
    return result;
  }

  /** User-Agent, Content-Type and, with a shared secret, the signature of the exact bytes. */
  private baseHeaders(destination: DestinationSettings, body: Buffer): Record<string, string> {
    const headers: Record<string, string> = {
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
    };
    const ciphertext = destination.sharedSecretCiphertext;
    if (ciphertext) {
      let signer = this.signers.get(ciphertext);
      if (signer === undefined) {
        signer = new HmacSha1(this.options.secrets.open(ciphertext));
        this.signers.set(ciphertext, signer);
      }
      headers[SIGNATURE_HEADER] = signer.hex(body);
    }
    return headers;
  }

  private async retry(retry: OutgoingRecord, delaySeconds: number): Promise<DispatchResult> {
    await this.producer.send([retry]);
    this.metrics.retries.inc({ tier: delayLabel(delaySeconds) });
    this.metrics.delivery('retried');
    return 'retried';
  }

  private async die(
    record: IncomingRecord,
    facts: DeliveryFacts | undefined,
    dead: DeadLetter,
  ): Promise<DispatchResult> {
    if (facts) {
      this.logger.warn(
        `${describe(facts)}: dead after ${dead.attempts} attempt(s): ${dead.reason}`,
      );
    }
    const records = [deadRecord(record, dead)];
    if (facts && OUTCOME_TYPES.has(facts.type ?? '')) {
      records.push(
        outcomeRecord(record, facts, {
          result: 'dead',
          reason: dead.reason,
          lastStatus: dead.lastStatus,
          attempts: dead.attempts,
          at: dead.lastAttemptAt,
        }),
      );
    }
    await this.producer.send(records);
    this.metrics.deadLetters.inc({ reason: dead.reason });
    this.metrics.delivery('dead');
    return 'dead';
  }

  private async discard(
    record: IncomingRecord,
    facts: DeliveryFacts,
    reason: string,
  ): Promise<DispatchResult> {
    this.logger.warn(`${describe(facts)}: discarded, ${reason}`);
    this.metrics.discarded.inc({ reason });
    return this.finish(record, facts, 'discarded', {
      reason,
      attempts: facts.attempt - 1,
      at: this.now(),
    });
  }

  /** Counts a delivered or discarded delivery and publishes its outcome when someone waits on it. */
  private async finish(
    record: IncomingRecord,
    facts: DeliveryFacts,
    result: Exclude<DeliveryResult, 'dead'>,
    outcome: { reason?: string; attempts: number; at: number },
  ): Promise<DispatchResult> {
    if (OUTCOME_TYPES.has(facts.type ?? '')) {
      await this.producer.send([outcomeRecord(record, facts, { result, ...outcome })]);
    }
    this.metrics.delivery(result);
    return result;
  }
}

/** The webhooks a delivery covers now: every current one, or the retry's subset still present. */
function covered(
  destination: DestinationSettings,
  ids: readonly string[] | undefined,
): readonly WebhookSettings[] {
  if (ids === undefined) return destination.webhooks;
  return destination.webhooks.filter((webhook) => ids.includes(webhook.id));
}

function describe(facts: DeliveryFacts): string {
  return `delivery of message ${facts.messageId ?? '(none)'} to destination ${facts.destinationId}`;
}
