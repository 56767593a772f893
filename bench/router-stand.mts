/**
 * What the router benchmark runs against: a source with an enabled webhook destination in
 * PostgreSQL, fresh topics under a prefix of the run's own, and `sluice.calls.v1` pre-filled
 * with call records as ingest writes them. {@link RouterStand.tearDown} removes all of it
 * (safe to call twice and after a failure).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

import type { Admin, Kafka, Message } from 'kafkajs';

import { removeStand, withDatabase } from './common.mts';
import { createTopics, kafkaClient } from './kafka.mts';
import type { Supervisor } from './processes.mts';

/** The build of libs/contracts, where topic and header names are defined once. */
const CONTRACTS = '../dist/libs/contracts/src/index.js';
/** Records per produce request while pre-filling, and requests in flight. */
const FILL_CHUNK = 2_000;
const FILL_CONCURRENCY = 4;
/** A fixed time, so every record of a run is alike. */
const TIMESTAMP = '2026-01-01T00:00:00.000Z';
/** Destinations with a filter beside the plain one (the most a source may have, less one). */
export const FILTERED_DESTINATIONS = 19;
/**
 * Each filtered destination's filter: three comparisons over the call's JSON, the first two
 * true and the last false for every pre-filled call, so all three are evaluated and none of
 * these destinations takes a call (every side produces one delivery per call).
 */
const FILTER = {
  types: ['track'],
  where: {
    and: [
      { field: 'properties.currency', op: 'eq', value: 'EUR' },
      { field: 'context.locale', op: 'prefix', value: 'en' },
      { field: 'properties.total', op: 'gte', value: 1_000 },
    ],
  },
};

interface Contracts {
  readonly TOPIC: Record<string, string>;
  readonly HEADER: Record<string, string>;
}

const contracts = createRequire(import.meta.url)(CONTRACTS) as Contracts;
export const { TOPIC, HEADER } = contracts;

/** What the stand needs to know. */
export interface StandOptions {
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly partitions: number;
  readonly records: number;
  readonly callBytes: number;
  readonly users: number;
}

/** The bytes of one pre-filled record, as a produce request carries them. */
export interface RecordShape {
  readonly value: number;
  readonly key: number;
  readonly headers: number;
}

export class RouterStand {
  /** Unique per run, so every topic and consumer group is fresh. */
  readonly prefix = `bench.router.${Date.now().toString(36)}.`;
  readonly kafka: Kafka;
  sourceId = '';
  /** A source of its own that holds the filtered destinations while the other sides run. */
  parkingSourceId = '';
  destinationId = '';
  shape?: RecordShape;
  admin?: Admin;
  private tornDown?: Promise<void>;

  private readonly options: StandOptions;
  private readonly supervisor: Supervisor;

  constructor(options: StandOptions, supervisor: Supervisor) {
    this.options = options;
    this.supervisor = supervisor;
    this.kafka = kafkaClient(options.brokers);
  }

  get callsTopic(): string {
    return `${this.prefix}${TOPIC.calls}`;
  }

  get deliveriesTopic(): string {
    return `${this.prefix}${TOPIC.deliveries}`;
  }

  /** Where the bare loop writes: the same partitions as the deliveries topic. */
  get bareTopic(): string {
    return `${this.prefix}bench.bare-deliveries.v1`;
  }

  /** The router's consumer group (see apps/router/src/main.ts). */
  get routerGroup(): string {
    return `${this.prefix}sluice-router`;
  }

  /** Creates the rows and topics, and pre-fills the calls topic; returns the fill rate. */
  async setUp(): Promise<number> {
    await withDatabase(this.options.databaseUrl, async (database) => {
      const source = await database.query<{ id: string }>(
        'INSERT INTO source (name, write_key) VALUES ($1, $2) RETURNING id',
        [`bench ${this.prefix}`, `bench-${randomBytes(16).toString('hex')}`],
      );
      this.sourceId = source.rows[0].id;
      const destination = await database.query<{ id: string }>(
        `WITH d AS (
           INSERT INTO destination (source_id, kind, name, enabled)
           VALUES ($1, 'webhooks', 'bench', true) RETURNING id
         )
         INSERT INTO webhook (destination_id, position, url)
         SELECT id, 0, 'http://127.0.0.1:9/bench' FROM d RETURNING destination_id AS id`,
        [this.sourceId],
      );
      this.destinationId = destination.rows[0].id;
      const parking = await database.query<{ id: string }>(
        'INSERT INTO source (name, write_key) VALUES ($1, $2) RETURNING id',
        [`bench parking ${this.prefix}`, `bench-${randomBytes(16).toString('hex')}`],
      );
      this.parkingSourceId = parking.rows[0].id;
      // Slots 1-19, so that they fit beside the plain destination's slot 0 when moved over.
      for (let slot = 1; slot <= FILTERED_DESTINATIONS; slot += 1) {
        await database.query(
          `WITH d AS (
             INSERT INTO destination (source_id, kind, name, enabled, filter, slot)
             VALUES ($1, 'webhooks', $2, true, $3, $4) RETURNING id
           )
           INSERT INTO webhook (destination_id, position, url)
           SELECT id, 0, 'http://127.0.0.1:9/bench' FROM d`,
          [this.parkingSourceId, `bench filtered ${slot}`, JSON.stringify(FILTER), slot],
        );
      }
    });
    this.admin = this.kafka.admin();
    await this.admin.connect();
    // Every topic the router creates at start-up, so it finds them with these partitions.
    const topics = [...Object.values(TOPIC).map((name) => `${this.prefix}${name}`), this.bareTopic];
    await createTopics(this.admin, topics, this.options.partitions);
    return this.fill();
  }

  /** Records on a topic: the sum of its partitions' end offsets (the topics start empty). */
  async recordsOn(topic: string): Promise<number> {
    const offsets = await this.requireAdmin().fetchTopicOffsets(topic);
    return offsets.reduce((sum, { high }) => sum + Number(high), 0);
  }

  /** Records of the calls topic a group has not committed yet (all when it has none). */
  async lag(groupId: string): Promise<number> {
    const admin = this.requireAdmin();
    const [ends, [committed]] = await Promise.all([
      admin.fetchTopicOffsets(this.callsTopic),
      admin.fetchOffsets({ groupId, topics: [this.callsTopic] }),
    ]);
    return ends.reduce((lag, { partition, high }) => {
      const offset = committed?.partitions.find((p) => p.partition === partition)?.offset;
      return lag + Number(high) - Math.max(0, Number(offset ?? '-1'));
    }, 0);
  }

  /**
   * Moves the filtered destinations to the calls' source (`on`) or back to the parking source,
   * so that the other sides route for a source with one destination only. A router started
   * next reads them.
   */
  async filtered(on: boolean): Promise<void> {
    await withDatabase(this.options.databaseUrl, (database) =>
      database.query(
        `UPDATE destination SET source_id = $1
         WHERE source_id = ANY($2::uuid[]) AND filter IS NOT NULL`,
        [on ? this.sourceId : this.parkingSourceId, [this.sourceId, this.parkingSourceId]],
      ),
    );
  }

  async deleteGroup(groupId: string): Promise<void> {
    await this.requireAdmin().deleteGroups([groupId]);
  }

  /** Stops the processes, deletes the source (its destination and webhook go with it), the topics and groups. */
  tearDown(): Promise<void> {
    this.tornDown ??= this.removeAll();
    return this.tornDown;
  }

  /** Produces the call records, FILL_CONCURRENCY requests at a time; returns records/s. */
  private async fill(): Promise<number> {
    const producer = this.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const started = performance.now();
    try {
      let next = 0;
      const worker = async () => {
        while (next < this.options.records) {
          const from = next;
          next = Math.min(this.options.records, next + FILL_CHUNK);
          const messages: Message[] = [];
          for (let i = from; i < next; i += 1) messages.push(this.callRecord(i));
          await producer.sendBatch({
            acks: -1,
            topicMessages: [{ topic: this.callsTopic, messages }],
          });
        }
      };
      await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
    } finally {
      await producer.disconnect();
    }
    return this.options.records / ((performance.now() - started) / 1000);
  }

  /** Record `i`: a track call as ingest publishes it (value, key and headers). */
  private callRecord(i: number): Message {
    const userKey = `user-${String(i % this.options.users).padStart(7, '0')}`;
    const messageId = randomUUID();
    const value = callValue(userKey, messageId, this.options.callBytes);
    const key = `${this.sourceId}:${userKey}`;
    const headers = {
      [HEADER.sourceId]: this.sourceId,
      [HEADER.callType]: 'track',
      [HEADER.messageId]: messageId,
      [HEADER.integrations]: '{"Webhooks":true}',
    };
    this.shape ??= {
      value: Buffer.byteLength(value),
      key: Buffer.byteLength(key),
      headers: Object.entries(headers).reduce(
        (sum, [name, text]) => sum + Buffer.byteLength(name) + Buffer.byteLength(text),
        0,
      ),
    };
    return { key, value, headers };
  }

  private requireAdmin(): Admin {
    if (!this.admin) throw new Error('the stand is not set up');
    return this.admin;
  }

  private removeAll(): Promise<void> {
    const { supervisor, prefix, admin } = this;
    return removeStand({
      supervisor,
      databaseUrl: this.options.databaseUrl,
      sourceId: this.sourceId || undefined,
      sourceIds: this.parkingSourceId ? [this.parkingSourceId] : [],
      admin,
      prefix,
    });
  }
}

/**
 * An enriched track call as ingest publishes it (version, messageId, receivedAt, context.ip,
 * properties), padded to exactly `bytes` bytes of JSON.
 */
export function callValue(userId: string, messageId: string, bytes: number): string {
  const call = {
    version: 1,
    type: 'track',
    userId,
    event: 'Order Completed',
    properties: {
      orderId: `order-${userId}`,
      total: 127.5,
      currency: 'EUR',
      coupon: 'SPRING26',
      products: [1, 2, 3].map((n) => ({
        productId: `p-${n}`,
        sku: `SKU-${1000 + n}`,
        name: `Product number ${n}`,
        price: 38.33,
        quantity: n,
      })),
      note: '',
    },
    context: {
      library: { name: 'analytics-node', version: '2.1.0' },
      locale: 'en-GB',
      ip: '127.0.0.1',
    },
    messageId,
    timestamp: TIMESTAMP,
    receivedAt: TIMESTAMP,
  };
  const missing = bytes - Buffer.byteLength(JSON.stringify(call));
  if (missing < 0) throw new Error(`a call record needs at least ${bytes - missing} bytes`);
  call.properties.note = 'x'.repeat(missing);
  return JSON.stringify(call);
}
