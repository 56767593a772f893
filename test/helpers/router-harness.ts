import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadRouterConfig, RouterConfig } from '../../apps/router/src/config';
import { routerKafka } from '../../apps/router/src/kafka-topology';
import { startRouter } from '../../apps/router/src/main';
import { HEADER, TOPIC } from '@app/contracts';
import {
  BatchProducer,
  headerText,
  IncomingRecord,
  KafkaConnection,
  OutgoingRecord,
} from '@app/kafka';
import { DestinationSettings, SettingsCache } from '@app/settings';

import { IngestHarness } from './ingest-harness';
import { eventually, scrapeMetric, serviceEnv } from './services';
import { TopicReader } from './topic-reader';

/** A destination row made for a test. */
export interface TestDestination {
  readonly id: string;
  readonly sourceId: string;
}

/** Options of {@link RouterHarness.destination}. */
export interface DestinationOptions {
  readonly enabled?: boolean;
  /** Webhook URLs, positions 0.. in this order (1 to 5; none is refused by the API). */
  readonly urls?: readonly string[];
  /** Unique per source; `hooks` when left out. */
  readonly name?: string;
  /** A filter as the admin API stores it (JSON); none when left out. */
  readonly filter?: unknown;
}

/** Longest wait for the router to route what is on the calls topic. */
const SETTLE_TIMEOUT_MS = 20_000;

/**
 * Ingest and the router against one fresh, migrated database and one topic prefix (the
 * ingest harness's), a reader of the deliveries topic, and a producer for records published
 * straight to the calls topic (as the admin app publishes delete notifications).
 */
export class RouterHarness extends IngestHarness {
  router!: NestFastifyApplication;
  routerConfig!: RouterConfig;
  routerUrl!: string;
  deliveries!: TopicReader;
  producer!: BatchProducer;
  private admin?: ReturnType<KafkaConnection['admin']>;

  /** Starts ingest, then the router; `env` overrides variables of both. */
  override async start(env: Record<string, string> = {}): Promise<this> {
    await super.start(env);
    const kafkaBrokers = env.KAFKA_BROKERS?.split(',') ?? serviceEnv().kafkaBrokers;
    this.routerConfig = loadRouterConfig({
      KAFKA_BROKERS: kafkaBrokers.join(','),
      DATABASE_URL: this.db.url,
      KAFKA_TOPIC_PREFIX: this.prefix,
      KAFKA_TOPIC_PARTITIONS: '2',
      HTTP_HOST: '127.0.0.1',
      ROUTER_PORT: '0',
      LOG_LEVEL: 'error',
      ...env,
    });
    this.router = await startRouter(this.routerConfig);
    this.routerUrl = await this.router.getUrl();
    this.deliveries = await new TopicReader(this.connection, [TOPIC.deliveries]).start();
    this.producer = new BatchProducer(this.connection);
    await this.producer.connect();
    const admin = this.connection.admin();
    await admin.connect();
    this.admin = admin;
    return this;
  }

  override async close(): Promise<void> {
    await this.deliveries?.stop();
    await this.producer?.disconnect();
    await this.admin?.disconnect();
    await this.router?.close();
    await super.close();
  }

  /** The router's settings cache. */
  get routerSettings(): SettingsCache {
    return this.router.get(SettingsCache);
  }

  /**
   * Inserts a webhook destination of a source with its webhooks (one statement, so it is
   * never enabled without webhooks) and waits until the router's cache has it.
   */
  async destination(sourceId: string, options: DestinationOptions = {}): Promise<TestDestination> {
    const urls = options.urls ?? ['https://example.com/hook'];
    const enabled = options.enabled ?? true;
    const rows = await this.sql<{ id: string }>(
      `WITH d AS (
         INSERT INTO destination (source_id, kind, name, enabled, filter)
         VALUES ($1, 'webhooks', $4, $2, $5) RETURNING id
       )
       INSERT INTO webhook (destination_id, position, url, headers)
       SELECT d.id, u.ordinality - 1, u.url, '{}'::jsonb
       FROM d, unnest($3::text[]) WITH ORDINALITY AS u(url, ordinality)
       RETURNING destination_id AS id`,
      [
        sourceId,
        enabled,
        urls,
        options.name ?? 'hooks',
        options.filter === undefined ? null : JSON.stringify(options.filter),
      ],
    );
    const id = rows[0].id;
    await this.routerSeesDestination(
      id,
      (d) => d?.enabled === enabled && d.webhooks.length === urls.length,
    );
    return { id, sourceId };
  }

  /** Waits until the router's cached first (oldest) destination of `sourceId` satisfies `check`. */
  async routerSees(
    what: string,
    check: (destination: DestinationSettings | undefined) => boolean,
    sourceId: string,
  ): Promise<void> {
    const cache = this.routerSettings;
    await eventually(
      () => (check(cache.destinationsForSource(sourceId)[0]) ? true : undefined),
      10_000,
      `${what} in the router's settings cache`,
    );
  }

  /** Waits until the router's cached destination `destinationId` satisfies `check`. */
  async routerSeesDestination(
    destinationId: string,
    check: (destination: DestinationSettings | undefined) => boolean,
  ): Promise<void> {
    const cache = this.routerSettings;
    await eventually(
      () => (check(cache.destination(destinationId)) ? true : undefined),
      10_000,
      `destination ${destinationId} as wanted in the router's settings cache`,
    );
  }

  /** Publishes records straight to `sluice.calls.v1`. */
  async publishCalls(records: readonly Omit<OutgoingRecord, 'topic'>[]): Promise<void> {
    await this.producer.send(records.map((record) => ({ ...record, topic: TOPIC.calls })));
  }

  /** The call record ingest published with this message id. */
  async callRecord(messageId: string): Promise<IncomingRecord> {
    const [record] = await this.reader.waitFor(
      TOPIC.calls,
      (r) => headerText(r, HEADER.messageId) === messageId,
    );
    return record;
  }

  /** The delivery of the call with this message id. */
  async delivery(messageId: string): Promise<IncomingRecord> {
    const [record] = await this.deliveries.waitFor(
      TOPIC.deliveries,
      (r) => headerText(r, HEADER.messageId) === messageId,
    );
    return record;
  }

  /** Deliveries read so far whose message id header is `messageId`. */
  deliveriesOf(messageId: string): IncomingRecord[] {
    return this.deliveries.withHeader(TOPIC.deliveries, HEADER.messageId, messageId);
  }

  /**
   * Waits until the router has routed every record on the calls topic (its group committed
   * up to the end) and the deliveries reader has read every delivery produced: after this,
   * a delivery not read was never produced.
   */
  async settled(): Promise<void> {
    await eventually(
      async () => ((await this.routerLag()) === 0 ? true : undefined),
      SETTLE_TIMEOUT_MS,
      'the router to route every call',
    );
    const ends = await this.kafkaAdmin().fetchTopicOffsets(this.connection.topic(TOPIC.deliveries));
    await eventually(
      () =>
        ends.every(
          ({ partition, high }) =>
            high === '0' ||
            this.deliveries.records.some(
              (r) =>
                r.topic === TOPIC.deliveries &&
                r.partition === partition &&
                BigInt(r.offset) >= BigInt(high) - 1n,
            ),
        )
          ? true
          : undefined,
      SETTLE_TIMEOUT_MS,
      'the deliveries reader to reach the end of the topic',
    );
  }

  /** Calls on the topic the router has not committed yet. */
  async routerLag(): Promise<number> {
    const admin = this.kafkaAdmin();
    const topic = this.connection.topic(TOPIC.calls);
    const [ends, [committed]] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({
        groupId: routerKafka(this.routerConfig).consumers.calls.groupId,
        topics: [topic],
      }),
    ]);
    let lag = 0;
    for (const { partition, high } of ends) {
      const offset = committed?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
      lag += Number(high) - Math.max(0, Number(offset));
    }
    return lag;
  }

  /** A counter of the router's `/metrics` with these labels (0 when absent). */
  routerMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return scrapeMetric(this.routerUrl, name, labels);
  }

  /**
   * Makes the test database unreachable: new connections refused, open ones (both apps'
   * pools and LISTEN connections) terminated. The shared server stays up.
   */
  async cutOffDatabase(): Promise<void> {
    await this.db.admin(`ALTER DATABASE "${this.db.name}" ALLOW_CONNECTIONS false`);
    await this.db.admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = '${this.db.name}' AND pid <> pg_backend_pid()`,
    );
  }

  /** Lets connections to the test database in again. */
  async restoreDatabase(): Promise<void> {
    await this.db.admin(`ALTER DATABASE "${this.db.name}" ALLOW_CONNECTIONS true`);
  }

  private kafkaAdmin(): NonNullable<RouterHarness['admin']> {
    if (!this.admin) throw new Error('RouterHarness is not started');
    return this.admin;
  }
}
