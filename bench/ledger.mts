/**
 * The delivery ledger's writer (apps/admin/src/ledger/ledger.writer.ts, as built in dist/)
 * against the limit PostgreSQL itself sets for the same rows: one `INSERT … SELECT FROM
 * unnest(…)` of 2,000 rows at a time, back to back, into a plain table with the same columns
 * and indexes. The writer adds what the ledger needs on top (day partitions, the upsert that
 * makes repeats harmless, the outcome → row mapping, the gathering of callers). Every row has
 * a userId, an anonymousId and an event, so that each search index takes an entry. Also the
 * bytes a row takes, with its indexes, for sizing the retention.
 *
 *   npm run bench:ledger        (BENCH_LEDGER_ROWS, default 100,000; BENCH_ROUNDS, default 3)
 *   BENCH_LEDGER_ROWS=1000 BENCH_ROUNDS=1 npm run bench:ledger   (a smoke run: it works)
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

import { envReader, progress, withDatabase } from './common.mts';

/** What this bench uses of the built project (the JavaScript carries no types). */
interface Row {
  readonly firstAttemptAt: Date;
}
interface LedgerLib {
  LedgerWriter: new (
    dataSource: object,
    metrics: object,
    options: { retentionDays: number },
  ) => { add(row: Row): Promise<void> };
}
interface RowsLib {
  ledgerRow(this: void, outcome: object): Row;
}
interface SettingsLib {
  createSettingsDataSource(options: { url: string; poolSize: number }): {
    initialize(): Promise<{ destroy(): Promise<void>; query(sql: string): Promise<unknown> }>;
  };
  runMigrations(dataSource: object): Promise<unknown>;
}
interface ObservabilityLib {
  Metrics: new (app: string) => object;
}

const requireBuilt = createRequire(import.meta.url);
const { LedgerWriter } = requireBuilt(
  '../dist/apps/admin/src/ledger/ledger.writer.js',
) as LedgerLib;
const { ledgerRow } = requireBuilt('../dist/apps/admin/src/ledger/ledger-rows.js') as RowsLib;
const settings = requireBuilt('../dist/libs/settings/src/index.js') as SettingsLib;
const { Metrics } = requireBuilt('../dist/libs/observability/src/index.js') as ObservabilityLib;

/** Records the ledger consumer keeps in flight at once (its partitions × slots, about). */
const IN_FLIGHT = 4_096;
const BARE_BATCH = 2_000;

const env = envReader(process.env, 'bench:ledger');
const ROWS = env.number('BENCH_LEDGER_ROWS', 100_000, 1_000, 10_000_000);
const ROUNDS = env.number('BENCH_ROUNDS', 3, 1, 20);
const baseUrl = env.required('DATABASE_URL');

/** Users the bench's calls are about: the user indexes see repeats, as in real traffic. */
const USERS = 100_000;

/** A delivered track call's outcome, as the dispatcher publishes it. */
function outcome(now: number, destinationId: string, attempts = 1, result = 'delivered'): object {
  const user = Math.floor(Math.random() * USERS);
  return {
    userId: `user-${user}`,
    anonymousId: `anon-${user}`,
    deliveryId: randomUUID(),
    messageId: `ajs-next-${randomUUID()}`,
    sourceId: randomUUID(),
    destinationId,
    type: 'track',
    event: 'Order Completed',
    result,
    attempts,
    lastStatus: result === 'delivered' ? 200 : 503,
    firstAttemptAt: new Date(now).toISOString(),
    at: new Date(now + attempts).toISOString(),
    webhooks: [{ webhookId: randomUUID(), kind: 'success', status: 200, latencyMs: 12.3 }],
  };
}

/** A database of the bench's own, migrated; dropped by `drop`. */
async function benchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_ledger_${process.pid}`;
  await withDatabase(baseUrl, (db) => db.query(`CREATE DATABASE ${name}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await withDatabase(baseUrl, (db) => db.query(`DROP DATABASE ${name} WITH (FORCE)`));
    },
  };
}

/** Rows per second through the writer, callers kept at IN_FLIGHT. */
async function writerRate(dataSource: object, rows: readonly Row[]): Promise<number> {
  const writer = new LedgerWriter(dataSource, new Metrics('bench'), { retentionDays: 3 });
  const started = performance.now();
  let next = 0;
  const caller = async () => {
    while (next < rows.length) await writer.add(rows[next++]);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, caller));
  return rows.length / ((performance.now() - started) / 1000);
}

/** Rows per second of plain unnest INSERTs of the same columns into an indexed plain table. */
async function bareRate(url: string, rows: readonly Row[]): Promise<number> {
  return withDatabase(url, async (db) => {
    await db.query(`DROP TABLE IF EXISTS bare_ledger`);
    await db.query(`CREATE TABLE bare_ledger (LIKE delivery_ledger INCLUDING ALL)`);
    const started = performance.now();
    for (let i = 0; i < rows.length; i += BARE_BATCH) {
      const batch = rows.slice(i, i + BARE_BATCH) as unknown as Record<string, unknown>[];
      const column = (name: string) => batch.map((r) => r[name] ?? null);
      await db.query(
        `INSERT INTO bare_ledger ("id", "first_attempt_at", "source_id", "destination_id",
           "message_id", "call_type", "event", "state", "reason", "last_status", "attempts",
           "updated_at", "history", "user_id", "anonymous_id")
         SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
           $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::int[],
           $12::timestamptz[], $13::jsonb[], $14::text[], $15::text[])`,
        [
          ...['id', 'firstAttemptAt', 'sourceId', 'destinationId', 'messageId', 'callType'].map(
            column,
          ),
          ...['event', 'state', 'reason', 'lastStatus', 'attempts', 'updatedAt'].map(column),
          batch.map((r) => JSON.stringify(r.history)),
          column('userId'),
          column('anonymousId'),
        ],
      );
    }
    return rows.length / ((performance.now() - started) / 1000);
  });
}

async function bytesPerRow(url: string, count: number): Promise<number> {
  return withDatabase(url, async (db) => {
    await db.query(`VACUUM FULL delivery_ledger`);
    const { rows } = await db.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = 'delivery_ledger'`,
    );
    return Number(rows[0].bytes) / count;
  });
}

async function main(): Promise<void> {
  const writer: number[] = [];
  const bare: number[] = [];
  let bytes = 0;
  for (let round = 1; round <= ROUNDS; round += 1) {
    const database = await benchDatabase();
    const dataSource = await settings
      .createSettingsDataSource({ url: database.url, poolSize: 2 })
      .initialize();
    try {
      await settings.runMigrations(dataSource);
      const now = Date.now();
      const destinationId = randomUUID();
      const rows = Array.from({ length: ROWS }, () => ledgerRow(outcome(now, destinationId)));
      progress(`round ${round}: ${ROWS} rows through the writer, then bare`);
      writer.push(await writerRate(dataSource, rows));
      bare.push(await bareRate(database.url, rows));
      bytes = await bytesPerRow(database.url, ROWS);
    } finally {
      await dataSource.destroy();
      await database.drop();
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const ratios = writer.map((w, i) => (w / bare[i]).toFixed(2));
  console.log(`ledger writer rows/s        ${fmt(median(writer))}   ${writer.map(fmt).join(' ')}`);
  console.log(`bare unnest INSERT rows/s   ${fmt(median(bare))}   ${bare.map(fmt).join(' ')}`);
  console.log(
    `writer ÷ bare INSERT         ${(median(writer) / median(bare)).toFixed(2)}   per round ${ratios.join(' ')}`,
  );
  console.log(`bytes per one-attempt row (table and indexes): ${Math.round(bytes)}`);
}

await main();
