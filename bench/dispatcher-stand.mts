/**
 * What the dispatcher benchmark runs against: two sources, each with an enabled webhook
 * destination sealed with a shared secret (the healthy one, and the other one whose webhook
 * answers 200 or never), and three topic prefixes of the run's own, one per measurement:
 * `a.` (deliveries for the healthy destination only), `b.` (a mix of both) and `c.` (nothing
 * on the main topic, records due in an hour on every retry tier). {@link DispatcherStand.tearDown}
 * removes all of it (safe to call twice and after a failure).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

import type { Admin, Kafka, Message } from 'kafkajs';
import type pg from 'pg';

import { removeStand, withDatabase } from './common.mts';
import { createTopics, kafkaClient } from './kafka.mts';
import type { Supervisor } from './processes.mts';
import { callValue, HEADER, TOPIC } from './router-stand.mts';

/** Healthy destinations in part `b`, beside the other one: ten destinations in all. */
export const HEALTHY_DESTINATIONS = 9;

const require = createRequire(import.meta.url);
/** The builds of libs/contracts and libs/signing (bench/run.sh builds first). */
const { retryTopic, parseDelayLabel } = require('../dist/libs/contracts/src/index.js') as {
  retryTopic: (delaySeconds: number) => string;
  parseDelayLabel: (label: string) => number;
};
const { SecretBox } = require('../dist/libs/signing/src/index.js') as {
  SecretBox: new (key: string) => { seal(plaintext: string): Buffer };
};

/** Records per produce request while pre-filling, and requests in flight. */
const FILL_CHUNK = 2_000;
const FILL_CONCURRENCY = 4;

/** The measurements' topic prefixes, under the stand's own (`d`: (a)'s batching sides). */
export type Part = 'a' | 'b' | 'c' | 'd';

/** What the stand needs to know. */
export interface DispatcherStandOptions {
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly partitions: number;
  /** The dispatcher's DISPATCHER_RETRY_DELAYS: one tier topic per distinct delay. */
  readonly retryDelays: string;
  readonly bodyBytes: number;
  readonly users: number;
}

/** A topic's offset per partition. */
export type Offsets = { partition: number; offset: string }[];

/** One destination of the stand. */
interface Target {
  sourceId: string;
  destinationId: string;
}

export class DispatcherStand {
  /** Unique per run, so every topic and consumer group is fresh. */
  readonly prefix = `bench.dispatcher.${Date.now().toString(36)}.`;
  /** Given to the dispatcher as SECRETS_ENCRYPTION_KEY. */
  readonly secretsKey = randomBytes(32).toString('base64');
  /** The destinations' shared secret, in plaintext (the sink checks signatures with it). */
  readonly secret = randomBytes(24).toString('hex');
  readonly kafka: Kafka;
  readonly healthy: Target = { sourceId: '', destinationId: '' };
  /** More healthy destinations of the healthy source (part `b` spreads over all of them). */
  readonly moreHealthy: Target[] = [];
  readonly other: Target = { sourceId: '', destinationId: '' };
  admin?: Admin;
  private tornDown?: Promise<void>;

  private readonly options: DispatcherStandOptions;
  private readonly supervisor: Supervisor;

  constructor(options: DispatcherStandOptions, supervisor: Supervisor) {
    this.options = options;
    this.supervisor = supervisor;
    this.kafka = kafkaClient(options.brokers);
  }

  /** The dispatcher's KAFKA_TOPIC_PREFIX for one measurement. */
  partPrefix(part: Part): string {
    return `${this.prefix}${part}.`;
  }

  /** The retry tier topics of one measurement, ascending. */
  tierTopics(part: Part): string[] {
    const delays = [...new Set(this.options.retryDelays.split(',').map(parseDelayLabel))];
    return delays.sort((x, y) => x - y).map((d) => `${this.partPrefix(part)}${retryTopic(d)}`);
  }

  mainTopic(part: Part): string {
    return `${this.partPrefix(part)}${TOPIC.deliveries}`;
  }

  outcomesTopic(part: Part): string {
    return `${this.partPrefix(part)}${TOPIC.deliveryOutcomes}`;
  }

  /**
   * The dispatcher's consumer groups and the admin app's, as each app declares them
   * (apps/dispatcher/src/kafka-topology.ts, apps/admin/src/kafka-topology.ts).
   */
  groups(part: Part): { main: string; retries: string; receipts: string; ledger: string } {
    const prefix = this.partPrefix(part);
    return {
      main: `${prefix}sluice-dispatcher`,
      retries: `${prefix}sluice-dispatcher-retry`,
      receipts: `${prefix}sluice-admin`,
      ledger: `${prefix}sluice-ledger`,
    };
  }

  /** Creates the rows (webhooks at `healthyUrl` and `otherUrl`) and every topic. */
  async setUp(healthyUrl: string, otherUrl: string): Promise<void> {
    const sealed = new SecretBox(this.secretsKey).seal(this.secret);
    await withDatabase(this.options.databaseUrl, async (database) => {
      for (const [target, name, url] of [
        [this.healthy, 'healthy', healthyUrl],
        [this.other, 'other', otherUrl],
      ] as const) {
        const source = await database.query<{ id: string }>(
          'INSERT INTO source (name, write_key) VALUES ($1, $2) RETURNING id',
          [`bench ${this.prefix}${name}`, `bench-${randomBytes(16).toString('hex')}`],
        );
        target.sourceId = source.rows[0].id;
        target.destinationId = await insertDestination(database, [
          target.sourceId,
          `bench ${name}`,
          sealed,
          url,
        ]);
      }
      for (let i = 2; i <= HEALTHY_DESTINATIONS; i += 1) {
        this.moreHealthy.push({
          sourceId: this.healthy.sourceId,
          destinationId: await insertDestination(database, [
            this.healthy.sourceId,
            `bench healthy ${i}`,
            sealed,
            healthyUrl,
          ]),
        });
      }
    });
    this.admin = this.kafka.admin();
    await this.admin.connect();
    const topics = (['a', 'b', 'c', 'd'] as const).flatMap((part) => [
      ...Object.values(TOPIC).map((name) => `${this.partPrefix(part)}${name}`),
      ...this.tierTopics(part),
    ]);
    await createTopics(this.admin, topics, this.options.partitions);
  }

  /** Points the other destination's webhook at `url` (the dispatcher reads it at start). */
  async setOtherUrl(url: string): Promise<void> {
    await withDatabase(this.options.databaseUrl, (database) =>
      database.query('UPDATE webhook SET url = $1 WHERE destination_id = $2', [
        url,
        this.other.destinationId,
      ]),
    );
  }

  /**
   * Batched delivery for the healthy destination: at most `maxCalls` calls a request (no byte
   * bound to speak of, 100 ms of waiting), or one call a request (null). The dispatcher reads it
   * at start.
   */
  async setBatching(maxCalls: number | null): Promise<void> {
    const bounds = maxCalls === null ? [null, null, null] : [maxCalls, 16_777_216, 100];
    await withDatabase(this.options.databaseUrl, (database) =>
      database.query(
        `UPDATE destination SET batch_max_calls = $1, batch_max_bytes = $2,
         batch_max_wait_ms = $3 WHERE id = $4`,
        [...bounds, this.healthy.destinationId],
      ),
    );
  }

  /**
   * Pre-fills part `a` with `records` deliveries for the healthy destination, part `d` with
   * `batchRecords` of them, and part `b` with `records`, every `otherEvery`-th for the other
   * destination and the rest spread over the healthy destinations in turn; returns records/s.
   */
  async fillMain(records: number, batchRecords: number, otherEvery: number): Promise<number> {
    const started = performance.now();
    const healthy = [this.healthy, ...this.moreHealthy];
    await this.produce(this.mainTopic('a'), records, (i) => this.delivery(i, this.healthy));
    await this.produce(this.mainTopic('d'), batchRecords, (i) => this.delivery(i, this.healthy));
    await this.produce(this.mainTopic('b'), records, (i) =>
      this.delivery(
        i,
        i % otherEvery === otherEvery - 1 ? this.other : healthy[i % healthy.length],
      ),
    );
    return (2 * records + batchRecords) / ((performance.now() - started) / 1000);
  }

  /** Puts `perTier` retries of the healthy destination, due in an hour, on every tier of part `c`. */
  async fillPausedTiers(perTier: number): Promise<void> {
    const now = Date.now();
    for (const topic of this.tierTopics('c')) {
      await this.produce(topic, perTier, (i) => {
        const record = this.delivery(i, this.healthy);
        const headers = record.headers as Record<string, string>;
        headers[HEADER.attempt] = '2';
        headers[HEADER.firstAttemptAt] = String(now);
        headers[HEADER.dueAt] = String(now + 3_600_000);
        headers[HEADER.reason] = 'http_5xx';
        return record;
      });
    }
  }

  /** Records of `part`'s main topic (the sum of its partitions' end offsets). */
  async recordsOn(topic: string): Promise<number> {
    const offsets = await this.requireAdmin().fetchTopicOffsets(topic);
    return offsets.reduce((sum, { high }) => sum + Number(high), 0);
  }

  /**
   * Before a run (no dispatcher of `part` running): its main group starts from the first
   * record, its retry group after the last one (retries an earlier run left are skipped).
   */
  async resetGroups(part: Part): Promise<void> {
    const admin = this.requireAdmin();
    const { main, retries } = this.groups(part);
    await admin.resetOffsets({ groupId: main, topic: this.mainTopic(part), earliest: true });
    for (const topic of this.tierTopics(part)) await this.skipToEnd(retries, topic);
  }

  /** Each partition's end offset (where the next record will go). */
  async endOffsets(topic: string): Promise<Offsets> {
    const ends = await this.requireAdmin().fetchTopicOffsets(topic);
    return ends.map(({ partition, high }) => ({ partition, offset: high }));
  }

  /**
   * Before the admin app of `part` starts: its ledger group reads the outcomes from `from`
   * on and no dead letter; its receipts group (delete outcomes only) nothing at all.
   */
  async startLedgerAt(part: Part, from: Offsets): Promise<void> {
    const { receipts, ledger } = this.groups(part);
    const outcomes = this.outcomesTopic(part);
    await this.requireAdmin().setOffsets({ groupId: ledger, topic: outcomes, partitions: from });
    await this.skipToEnd(ledger, `${this.partPrefix(part)}${TOPIC.deliveriesDead}`);
    await this.skipToEnd(receipts, outcomes);
  }

  /**
   * Rows the ledger holds for part `a`'s destination. Counted in PostgreSQL: the dispatcher
   * gathers many outcomes into one record, so the group's offsets do not count rows.
   */
  async ledgerRows(): Promise<number> {
    return withDatabase(this.options.databaseUrl, async (database) => {
      const { rows } = await database.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM delivery_ledger WHERE destination_id = $1',
        [this.healthy.destinationId],
      );
      return rows[0].n;
    });
  }

  private async skipToEnd(groupId: string, topic: string): Promise<void> {
    await this.requireAdmin().setOffsets({
      groupId,
      topic,
      partitions: await this.endOffsets(topic),
    });
  }

  /**
   * Stops the processes, deletes the sources (destinations and webhooks go with them), their
   * ledger rows, the topics and groups.
   */
  tearDown(): Promise<void> {
    const sourceIds = [this.healthy.sourceId, this.other.sourceId].filter(Boolean);
    this.tornDown ??= removeStand({
      supervisor: this.supervisor,
      databaseUrl: this.options.databaseUrl,
      sourceIds,
      admin: this.admin,
      prefix: this.prefix,
    }).then(() => this.deleteLedgerRows(sourceIds));
    return this.tornDown;
  }

  /** The ledger has no foreign key to its source: its rows are removed by source id. */
  private async deleteLedgerRows(sourceIds: string[]): Promise<void> {
    if (sourceIds.length === 0) return;
    try {
      await withDatabase(this.options.databaseUrl, (database) =>
        database.query('DELETE FROM delivery_ledger WHERE source_id = ANY($1::text[])', [
          sourceIds,
        ]),
      );
    } catch (error) {
      process.stderr.write(`cleanup: delete ledger rows: ${String(error)}\n`);
    }
  }

  /** One delivery record exactly as the router produces it (call-record.ts `deliveryRecord`). */
  delivery(i: number, target: Target): Message {
    const userKey = `user-${String(i % this.options.users).padStart(7, '0')}`;
    const messageId = randomUUID();
    return {
      key: `${target.destinationId}:${userKey}`,
      value: callValue(userKey, messageId, this.options.bodyBytes),
      headers: {
        [HEADER.sourceId]: target.sourceId,
        [HEADER.callType]: 'track',
        [HEADER.destinationId]: target.destinationId,
        [HEADER.messageId]: messageId,
      },
    };
  }

  /** Produces `records` records made by `make`, FILL_CONCURRENCY requests at a time. */
  private async produce(topic: string, records: number, make: (i: number) => Message) {
    const producer = this.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      let next = 0;
      const worker = async () => {
        while (next < records) {
          const from = next;
          next = Math.min(records, next + FILL_CHUNK);
          const messages: Message[] = [];
          for (let i = from; i < next; i += 1) messages.push(make(i));
          await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
        }
      };
      await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
    } finally {
      await producer.disconnect();
    }
  }

  private requireAdmin(): Admin {
    if (!this.admin) throw new Error('the stand is not set up');
    return this.admin;
  }
}

/** An enabled destination (source id, name, sealed secret) with one webhook (URL); its id. */
async function insertDestination(
  database: pg.Client,
  values: readonly [string, string, unknown, string],
): Promise<string> {
  const { rows } = await database.query<{ id: string }>(
    `WITH d AS (
       INSERT INTO destination (source_id, kind, name, enabled, shared_secret_ciphertext)
       VALUES ($1, 'webhooks', $2, true, $3) RETURNING id
     )
     INSERT INTO webhook (destination_id, position, url)
     SELECT id, 0, $4 FROM d RETURNING destination_id AS id`,
    [...values],
  );
  return rows[0].id;
}
