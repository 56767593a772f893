import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from 'pg';

import { DeliveryOutcome, HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, KafkaConnection, OutgoingRecord, TopicAdmin } from '@app/kafka';

import { buildToTemporaryDir } from '../../helpers/build';
import {
  eventually,
  serviceEnv,
  TEST_ADMIN_TOKEN,
  TEST_SECRETS_KEY,
  uniquePrefix,
} from '../../helpers/services';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const DELIVERIES = 6_000;
const DELETES = 50;
/** As the dispatcher gathers them (apps/dispatcher/src/delivery/outcome-batcher.ts), but fewer. */
const OUTCOMES_PER_RECORD = 20;
const PARTITIONS = 3;

/**
 * The ledger writer (the admin app, as its own process) killed with SIGKILL while it writes,
 * then started again: every outcome is in the ledger, each delivery once with each of its
 * attempts once, although records written before the kill are read again after it.
 */
describe('the ledger writer killed with SIGKILL mid-load and restarted', () => {
  let buildDir: string;
  const prefix = uniquePrefix('ledger');
  let database: TestDatabase;
  let db: Client;
  let connection: KafkaConnection;
  let topics: TopicAdmin;
  let producer: BatchProducer;
  let child: ChildProcess | undefined;

  function startChild(): ChildProcess {
    return spawn(process.execPath, [join(buildDir, 'apps', 'admin', 'src', 'main.js')], {
      env: {
        ...process.env,
        KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
        DATABASE_URL: database.url,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
        HTTP_HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        LOG_LEVEL: 'error',
        ADMIN_TOKENS: TEST_ADMIN_TOKEN,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }

  async function exited(proc: ChildProcess): Promise<void> {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise((resolve) => proc.once('exit', resolve));
  }

  async function count(sql: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>(sql);
    return rows[0].n;
  }

  beforeAll(async () => {
    buildDir = buildToTemporaryDir();
    database = await createMigratedTestDatabase();
    db = new Client({ connectionString: database.url });
    await db.connect();
    connection = new KafkaConnection({
      brokers: serviceEnv().kafkaBrokers,
      clientId: 'e2e-ledger',
      topicPrefix: prefix,
    });
    topics = new TopicAdmin(connection);
    await topics.connect();
    await topics.ensureTopics(
      [TOPIC.deliveryOutcomes, TOPIC.deliveriesDead].map((name) => ({
        name,
        partitions: PARTITIONS,
        replicationFactor: -1,
        retentionMs: 3_600_000,
      })),
    );
    producer = new BatchProducer(connection);
    await producer.connect();
  });

  afterAll(async () => {
    if (child) {
      child.kill('SIGTERM');
      await exited(child);
    }
    await producer?.disconnect();
    await topics?.disconnect();
    await db?.end();
    await database?.drop();
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  it('has every outcome once after the restart', async () => {
    const now = Date.now();
    const outcome = (id: string, attempts: number, result: DeliveryOutcome['result']) => ({
      deliveryId: id,
      messageId: `m-${id}`,
      sourceId: 'src',
      destinationId: 'dest',
      type: 'track',
      result,
      attempts,
      firstAttemptAt: new Date(now).toISOString(),
      at: new Date(now + attempts * 1_000).toISOString(),
    });
    // Each delivery: a retrying outcome, then a delivered one. As the dispatcher sends them:
    // a delete's alone (keyed like its delivery), the others many to an unkeyed record, so
    // one delivery's outcomes may sit on different partitions, in any order.
    const ids = Array.from({ length: DELIVERIES }, () => randomUUID());
    const records: OutgoingRecord[] = [];
    for (const [attempts, result] of [
      [1, 'retrying'],
      [2, 'delivered'],
    ] as const) {
      for (let i = 0; i < DELIVERIES; i += OUTCOMES_PER_RECORD) {
        const outcomes = ids
          .slice(i, i + OUTCOMES_PER_RECORD)
          .map((id) => outcome(id, attempts, result));
        records.push({
          topic: TOPIC.deliveryOutcomes,
          key: null,
          value: JSON.stringify(outcomes),
          headers: { [HEADER.outcomeCount]: String(outcomes.length) },
        });
      }
    }
    records.push(
      ...ids.slice(0, DELETES).map((id) => ({
        topic: TOPIC.deliveryOutcomes,
        key: `dest:${id}`,
        value: JSON.stringify({ ...outcome(randomUUID(), 1, 'delivered'), type: 'delete' }),
        headers: { [HEADER.callType]: 'delete' },
      })),
    );
    // In produces well under the broker's batch limit.
    for (let i = 0; i < records.length; i += 50) await producer.send(records.slice(i, i + 50));
    child = startChild();
    await eventually(
      async () =>
        (await count(`SELECT count(*)::int AS n FROM delivery_ledger`)) > 500 || undefined,
      60_000,
    );
    child.kill('SIGKILL');
    await exited(child);
    // Killed before it had written everything.
    const deliveredBefore = await count(
      `SELECT count(*)::int AS n FROM delivery_ledger WHERE state = 'delivered'`,
    );
    expect(deliveredBefore).toBeLessThan(DELIVERIES + DELETES);
    child = startChild();
    await eventually(
      async () =>
        (await count(
          `SELECT count(*)::int AS n FROM delivery_ledger WHERE state = 'delivered'`,
        )) ===
          DELIVERIES + DELETES || undefined,
      90_000,
    );
    await expect(count(`SELECT count(*)::int AS n FROM delivery_ledger`)).resolves.toBe(
      DELIVERIES + DELETES,
    );
    await expect(
      count(
        `SELECT count(*)::int AS n FROM delivery_ledger
          WHERE call_type = 'track' AND jsonb_array_length(history) <> 2`,
      ),
    ).resolves.toBe(0);
  }, 180_000);
});
