import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadDispatcherConfig } from '../../apps/dispatcher/src/config';
import { dispatcherKafka } from '../../apps/dispatcher/src/kafka-topology';
import { startDispatcher } from '../../apps/dispatcher/src/main';
import { HEADER, TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';
import { DestinationSettings, SettingsCache } from '@app/settings';
import { SecretBox } from '@app/signing';

import { DestinationOptions, RouterHarness, TestDestination } from './router-harness';
import { eventually, scrapeMetric, serviceEnv, TEST_SECRETS_KEY } from './services';
import { TopicReader } from './topic-reader';

/** A webhook destination made for a dispatcher test. */
export interface WebhookDestinationOptions extends DestinationOptions {
  /** The shared secret; none when absent. */
  readonly secret?: string;
  /** Static headers of every webhook. */
  readonly headers?: Record<string, string>;
}

/** Variables every dispatcher test starts with: a short ladder, a short window, loopback allowed. */
export const TEST_DISPATCHER_ENV: Readonly<Record<string, string>> = {
  DISPATCHER_RETRY_DELAYS: '1s,2s',
  DISPATCHER_RETRY_WINDOW_SECONDS: '8',
  DISPATCHER_REQUEST_TIMEOUT_MS: '1000',
  DISPATCHER_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
  SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
};

/**
 * Ingest, the router and the dispatcher against one fresh database and topic prefix, with a
 * reader of the dead-letter, outcome and retry-tier topics.
 */
export class DispatcherHarness extends RouterHarness {
  dispatcher?: NestFastifyApplication;
  dispatcherUrl!: string;
  outbound!: TopicReader;
  /** The variables the dispatcher was started with (also for a dispatcher in a child process). */
  dispatcherEnv!: Record<string, string>;

  /**
   * Starts ingest and the router, then the dispatcher and the reader of its topics; with
   * `inProcess` false only `dispatcherEnv` is set, for a dispatcher in a child process.
   */
  override async start(env: Record<string, string> = {}, inProcess = true): Promise<this> {
    await super.start(env);
    this.dispatcherEnv = {
      KAFKA_BROKERS: env.KAFKA_BROKERS ?? serviceEnv().kafkaBrokers.join(','),
      DATABASE_URL: this.db.url,
      KAFKA_TOPIC_PREFIX: this.prefix,
      KAFKA_TOPIC_PARTITIONS: '2',
      HTTP_HOST: '127.0.0.1',
      DISPATCHER_PORT: '0',
      LOG_LEVEL: 'error',
      ...TEST_DISPATCHER_ENV,
      ...env,
    };
    const config = loadDispatcherConfig(this.dispatcherEnv);
    // Out of process, nothing has created the tiers' topics yet: no reader of them either.
    if (!inProcess) return this;
    this.dispatcher = await startDispatcher(config);
    this.dispatcherUrl = await this.dispatcher.getUrl();
    this.outbound = await new TopicReader(this.connection, [
      TOPIC.deliveriesDead,
      TOPIC.deliveryOutcomes,
      ...dispatcherKafka(config).consumers.retries.topics,
    ]).start();
    return this;
  }

  override async close(): Promise<void> {
    await this.outbound?.stop();
    await this.dispatcher?.close();
    await super.close();
  }

  /**
   * A destination whose webhooks carry a secret and static headers, as the admin app stores
   * them, once the router's and the dispatcher's caches have it.
   */
  async webhookDestination(
    sourceId: string,
    options: WebhookDestinationOptions,
  ): Promise<TestDestination> {
    const destination = await this.destination(sourceId, { ...options, enabled: false });
    if (options.secret !== undefined) {
      const sealed = new SecretBox(TEST_SECRETS_KEY).seal(options.secret);
      await this.sql('UPDATE destination SET shared_secret_ciphertext = $1 WHERE id = $2', [
        sealed,
        destination.id,
      ]);
    }
    if (options.headers) {
      // Values sealed, as the admin app stores them.
      const box = new SecretBox(TEST_SECRETS_KEY);
      const sealed = Object.entries(options.headers).map(([name, v]) => [name, box.sealText(v)]);
      await this.sql('UPDATE webhook SET headers = $1 WHERE destination_id = $2', [
        JSON.stringify(Object.fromEntries(sealed)),
        destination.id,
      ]);
    }
    if (options.enabled ?? true) {
      await this.sql('UPDATE destination SET enabled = true WHERE id = $1', [destination.id]);
      await this.routerSeesDestination(destination.id, (d) => d?.enabled === true);
      await this.dispatcherSees(destination.id, (d) => d?.enabled === true);
    }
    return destination;
  }

  /** Waits until the in-process dispatcher's cache has the destination as `check` wants it. */
  async dispatcherSees(
    destinationId: string,
    check: (destination: DestinationSettings | undefined) => boolean,
  ): Promise<void> {
    if (!this.dispatcher) return;
    const cache = this.dispatcher.get(SettingsCache);
    await eventually(
      () => (check(cache.destination(destinationId)) ? true : undefined),
      10_000,
      "the destination in the dispatcher's settings cache",
    );
  }

  /** Sends one call through ingest and returns its messageId. */
  async track(
    writeKey: string,
    messageId: string,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const answer = await this.post(
      '/v1/track',
      { userId: `user-${messageId}`, event: 'Order Completed', messageId, ...extra },
      { basic: writeKey },
    );
    if (answer.status !== 200) throw new Error(`ingest answered ${answer.status}`);
    return messageId;
  }

  /** Records of `topic` (dead, outcomes or a tier) for this message id, waiting for `count`. */
  async outboundOf(
    topic: string,
    messageId: string,
    count = 1,
    timeoutMs = 20_000,
  ): Promise<IncomingRecord[]> {
    return this.outbound.waitFor(
      topic,
      (r) => r.headers[HEADER.messageId]?.toString('utf8') === messageId,
      count,
      timeoutMs,
    );
  }

  /** A metric of the dispatcher's `/metrics` summed over lines with these labels (0 when absent). */
  dispatcherMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return scrapeMetric(this.dispatcherUrl, name, labels);
  }
}
