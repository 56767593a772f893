import { gzipSync } from 'node:zlib';

import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';

import { loadIngestConfig } from '../../apps/ingest/src/config';
import { startIngest } from '../../apps/ingest/src/main';
import { TOPIC } from '@app/contracts';
import { KafkaConnection } from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { eventually, serviceEnv, uniquePrefix } from './services';
import { createMigratedTestDatabase, newWriteKey, TestDatabase } from './test-database';
import { TopicReader } from './topic-reader';

/** A source row made for a test. */
export interface TestSource {
  readonly id: string;
  readonly writeKey: string;
}

/** Options of one POST to the tracking API. */
export interface PostOptions {
  /** Sent as HTTP Basic user name (empty password). */
  readonly basic?: string;
  readonly gzip?: boolean;
  readonly headers?: Record<string, string>;
}

/** An answer: status and parsed JSON body. */
export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A migrated database of its own, the ingest app, and a reader of its topics. */
export class IngestHarness {
  app!: NestFastifyApplication;
  url!: string;
  connection!: KafkaConnection;
  reader!: TopicReader;
  /** The settings database; set before `start` to run on one the test prepared itself. */
  db!: TestDatabase;
  readonly prefix = uniquePrefix('ingest');

  /** Creates a database with the migrations applied (unless one is set) and starts ingest. */
  async start(env: Record<string, string> = {}): Promise<this> {
    this.db ??= await createMigratedTestDatabase();
    const kafkaBrokers = env.KAFKA_BROKERS?.split(',') ?? serviceEnv().kafkaBrokers;
    this.app = await startIngest(
      loadIngestConfig({
        KAFKA_BROKERS: kafkaBrokers.join(','),
        DATABASE_URL: this.db.url,
        KAFKA_TOPIC_PREFIX: this.prefix,
        KAFKA_TOPIC_PARTITIONS: '2',
        HTTP_HOST: '127.0.0.1',
        INGEST_PORT: '0',
        LOG_LEVEL: 'error',
        ...env,
      }),
    );
    this.url = await this.app.getUrl();
    this.connection = new KafkaConnection({
      brokers: kafkaBrokers,
      clientId: 'test-ingest',
      topicPrefix: this.prefix,
    });
    this.reader = await new TopicReader(this.connection, [
      TOPIC.calls,
      TOPIC.ingestRejected,
    ]).start();
    return this;
  }

  async close(): Promise<void> {
    await this.reader?.stop();
    await this.app?.close();
    await this.db?.drop();
  }

  /** Inserts a source and waits until the app's settings cache has it (through NOTIFY). */
  async source(enabled = true): Promise<TestSource> {
    const writeKey = newWriteKey();
    const rows = await this.sql<{ id: string }>(
      `INSERT INTO source (name, write_key, enabled) VALUES ('test', $1, $2) RETURNING id`,
      [writeKey, enabled],
    );
    const cache = this.app.get(SettingsCache);
    await eventually(() => cache.sourceByWriteKey(writeKey), 10_000, 'the new source in the cache');
    return { id: rows[0].id, writeKey };
  }

  /** Runs SQL on the test database. */
  async sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: this.db.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  /** POSTs a body (an object is sent as JSON; a string or Buffer as is). */
  async post(path: string, body: unknown, options: PostOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...options.headers,
    };
    if (options.basic !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${options.basic}:`).toString('base64')}`;
    }
    let payload: Buffer = Buffer.isBuffer(body)
      ? body
      : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    if (options.gzip) {
      payload = gzipSync(payload);
      headers['content-encoding'] = 'gzip';
    }
    const res = await fetch(`${this.url}${path}`, { method: 'POST', headers, body: payload });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
}
