import type { DataSource } from 'typeorm';

import { createSettingsDataSource } from '@app/settings';

import { filterSql, listSql } from '../../../apps/admin/src/deliveries/delivery-filter';
import { DeliveriesRepository } from '../../../apps/admin/src/deliveries/deliveries.repository';
import { DeliveriesService } from '../../../apps/admin/src/deliveries/deliveries.service';
import { partitionName } from '../../../apps/admin/src/ledger/ledger-partitions';
import { LedgerRepository } from '../../../apps/admin/src/ledger/ledger.repository';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

/**
 * "Every delivery of user U in the last 24 hours" on a generated day of ledger rows: the
 * query the API runs uses the user index and answers within a second. The day's size is
 * LEDGER_SEARCH_ROWS (default 200,000 so that `npm test` stays short); the sizing in
 * docs/operations.md (1,000 deliveries a second) is LEDGER_SEARCH_ROWS=86400000. About a
 * hundred deliveries per user, as many users as that makes.
 */
const ROWS = Number(process.env.LEDGER_SEARCH_ROWS ?? 200_000);
const PER_USER = 100;
const USERS = Math.max(1, Math.floor(ROWS / PER_USER));
const NOW = Date.parse('2030-06-15T12:00:00.000Z');
const DAY_MS = 86_400_000;
const INSERT_CHUNK = 1_000_000;

/**
 * Rows spread evenly over the 24 hours before NOW, ids and history as the writer stores
 * them: one in fifty dead after three attempts, the others delivered at once.
 */
const GENERATE = `
  INSERT INTO "delivery_ledger" ("id", "first_attempt_at", "source_id", "destination_id",
    "message_id", "call_type", "event", "state", "reason", "last_status", "last_latency_ms",
    "attempts", "updated_at", "history", "user_id", "anonymous_id")
  SELECT gen_random_uuid(), t.at, 'src-' || (i % 20), 'dest-' || (i % 50), 'm-' || i, 'track',
    (ARRAY['Order Completed', 'Product Viewed', 'Signed Up', 'Cart Viewed'])[1 + i % 4],
    CASE WHEN i % 50 = 0 THEN 'dead' ELSE 'delivered' END,
    CASE WHEN i % 50 = 0 THEN 'http_5xx' END,
    CASE WHEN i % 50 = 0 THEN 503 ELSE 200 END, 12.5,
    CASE WHEN i % 50 = 0 THEN 3 ELSE 1 END, t.at,
    jsonb_build_array(jsonb_build_object('attempts', 1, 'at', t.at, 'result', 'delivered',
      'webhooks', jsonb_build_array(jsonb_build_object('webhookId', 'w-' || (i % 50),
        'kind', 'success', 'status', 200, 'latencyMs', 12.5)))),
    'user-' || (i % $4), 'anon-' || (i % $4)
  FROM generate_series($1::bigint, $2::bigint) AS i,
    LATERAL (SELECT $3::timestamptz - (i * ${DAY_MS}::float8 / $5) * INTERVAL '1 ms' AS at) AS t`;

describe('the delivery ledger search', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    const ledger = new LedgerRepository(dataSource);
    for (const start of [NOW - DAY_MS, NOW]) {
      const day = new Date(start - (start % DAY_MS));
      await ledger.createPartition(partitionName(day), day, new Date(day.getTime() + DAY_MS));
    }
    for (let first = 1; first <= ROWS; first += INSERT_CHUNK) {
      const last = Math.min(ROWS, first + INSERT_CHUNK - 1);
      await dataSource.query(GENERATE, [first, last, new Date(NOW), USERS, ROWS]);
    }
    await dataSource.query(`ANALYZE "delivery_ledger"`);
  }, 3_600_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const lastDay = { from: new Date(NOW - DAY_MS).toISOString(), to: new Date(NOW).toISOString() };

  it.each([
    ['user (either id)', { user: 'user-42' }],
    ['userId', { userId: 'user-42' }],
  ])("finds a user's deliveries of the last 24 h by %s through the user index", async (_, by) => {
    const query = { ...by, ...lastDay, limit: 200 };
    const statement = listSql(filterSql(query, undefined), 200);
    const plan: { 'QUERY PLAN': string }[] = await dataSource.query(
      `EXPLAIN ${statement.sql}`,
      statement.params,
    );
    const text = plan.map((line) => line['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan.*delivery_ledger_\d+_user_id_/);
    const service = new DeliveriesService(new DeliveriesRepository(dataSource), {
      now: () => NOW,
      newId: () => '',
    });
    const started = performance.now();
    const page = await service.list(query);
    const elapsedMs = performance.now() - started;
    expect(page.items).toHaveLength(PER_USER);
    expect(page.items.every((item) => item.userId === 'user-42')).toBe(true);
    expect(elapsedMs).toBeLessThan(1_000);
    console.log(
      `${ROWS} ledger rows over 24 h, ${USERS} users: a user's ${page.items.length} ` +
        `deliveries by ${Object.keys(by)[0]} in ${elapsedMs.toFixed(1)} ms\n${text}`,
    );
  });
});
