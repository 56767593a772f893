import { randomUUID } from 'node:crypto';

import type { DeliveryOutcome } from '@app/contracts';
import { createSettingsDataSource } from '@app/settings';
import { Metrics } from '@app/observability';
import type { DataSource } from 'typeorm';

import { partitionName } from '../../../apps/admin/src/ledger/ledger-partitions';
import { ledgerRow, LedgerRow } from '../../../apps/admin/src/ledger/ledger-rows';
import { LedgerWriter } from '../../../apps/admin/src/ledger/ledger.writer';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2030-06-15T12:00:00.000Z');

/** An outcome's row; `attempts` and `at` order the outcomes of one delivery. */
function row(id: string, attempts: number, atMs: number, result = 'retrying'): LedgerRow {
  return ledgerRow({
    deliveryId: id,
    messageId: `m-${id}`,
    sourceId: 'src',
    destinationId: 'dest',
    type: 'track',
    event: 'Bought',
    result: result as 'retrying',
    attempts,
    reason: result === 'delivered' ? undefined : 'http_5xx',
    lastStatus: result === 'delivered' ? 200 : 503,
    firstAttemptAt: new Date(NOW - 60_000).toISOString(),
    at: new Date(atMs).toISOString(),
  })!;
}

/** The outcome a row was made of, as the dispatcher publishes it. */
function outcomeOf(r: LedgerRow): DeliveryOutcome {
  return {
    deliveryId: r.id,
    messageId: r.messageId,
    sourceId: r.sourceId,
    destinationId: r.destinationId,
    type: r.callType,
    result: r.state,
    attempts: r.attempts,
    reason: r.reason ?? undefined,
    firstAttemptAt: r.firstAttemptAt.toISOString(),
    at: r.updatedAt.toISOString(),
  };
}

describe('the delivery ledger writer', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let writer: LedgerWriter;
  let now = NOW;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    writer = new LedgerWriter(dataSource, new Metrics('test'), {
      retentionDays: 3,
      now: () => now,
    });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function ledger(
    id: string,
  ): Promise<{ state: string; attempts: number; history: unknown[] }> {
    const [found]: { state: string; attempts: number; history: unknown[] }[] =
      await dataSource.query(
        `SELECT "state", "attempts", "history", "dead_offset", "reason", "last_status" FROM "delivery_ledger" WHERE "id" = $1`,
        [id],
      );
    return found;
  }

  it('writes many concurrent outcomes in few statements, one row each', async () => {
    const ids = Array.from({ length: 3_000 }, () => randomUUID());
    await Promise.all(ids.map((id) => writer.add(row(id, 1, NOW))));
    const [{ count }] = await dataSource.query(
      `SELECT count(*)::int AS count FROM "delivery_ledger"`,
    );
    expect(count).toBe(3_000);
    const [{ relname }] = await dataSource.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'delivery_ledger'`,
    );
    expect(relname).toBe(partitionName(new Date(NOW)));
  });

  it('keeps the latest outcome and each attempt once, whatever repeats or comes late', async () => {
    const id = randomUUID();
    await writer.add(row(id, 1, NOW));
    await writer.add(row(id, 2, NOW + 10_000, 'delivered'));
    // At-least-once: the same outcomes again, and the first one late.
    await writer.add(row(id, 2, NOW + 10_000, 'delivered'));
    await writer.add(row(id, 1, NOW));
    await expect(ledger(id)).resolves.toMatchObject({ state: 'delivered', attempts: 2 });
    expect((await ledger(id)).history).toHaveLength(2);
  });

  it('folds outcomes of one delivery that share a statement', async () => {
    const id = randomUUID();
    await Promise.all([writer.add(row(id, 1, NOW)), writer.add(row(id, 2, NOW + 1, 'dead'))]);
    await expect(ledger(id)).resolves.toMatchObject({ state: 'dead', attempts: 2 });
    expect((await ledger(id)).history).toHaveLength(2);
  });

  it('keeps in each attempt of the history the batch request it travelled in', async () => {
    const id = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    await writer.add(ledgerRow({ ...outcomeOf(row(id, 1, NOW)), batchId: first })!);
    await writer.add(
      ledgerRow({ ...outcomeOf(row(id, 2, NOW + 10_000, 'delivered')), batchId: second })!,
    );
    const { history } = await ledger(id);
    expect(history.map((entry) => (entry as { batchId?: string }).batchId)).toEqual([
      first,
      second,
    ]);
  });

  it('keeps a dead letter pointer that came before its outcome', async () => {
    const id = randomUUID();
    await writer.addPointer({
      id,
      firstAttemptAt: new Date(NOW - 60_000),
      sourceId: 'src',
      destinationId: 'dest',
      messageId: `m-${id}`,
      callType: 'track',
      userId: null,
      anonymousId: 'a-1',
      partition: 2,
      offset: '41',
      updatedAt: new Date(NOW),
      reason: 'http_4xx',
      lastStatus: 410,
    });
    // Until its outcome comes, the placeholder says why it died.
    await expect(ledger(id)).resolves.toMatchObject({
      state: 'dead',
      attempts: -1,
      reason: 'http_4xx',
      last_status: 410,
    });
    await writer.add(row(id, 3, NOW, 'dead'));
    await expect(ledger(id)).resolves.toMatchObject({
      state: 'dead',
      attempts: 3,
      dead_offset: '41',
    });
  });

  it('drops partitions past the retention whole, and skips outcomes for them', async () => {
    const old = row(randomUUID(), 1, NOW);
    await writer.add(old);
    now = NOW + 3 * DAY_MS;
    await expect(writer.dropExpired()).resolves.toEqual([partitionName(new Date(NOW))]);
    const [{ count }] = await dataSource.query(
      `SELECT count(*)::int AS count FROM "delivery_ledger"`,
    );
    expect(count).toBe(0);
    await writer.add(row(randomUUID(), 1, NOW));
    const [{ again }] = await dataSource.query(
      `SELECT count(*)::int AS again FROM "delivery_ledger"`,
    );
    expect(again).toBe(0);
  });
});
