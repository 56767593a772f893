import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { createSettingsDataSource } from '@app/settings';

import { partitionName } from '../../../apps/admin/src/ledger/ledger-partitions';
import { DeadPointer, LedgerRow } from '../../../apps/admin/src/ledger/ledger-rows';
import { LedgerRepository } from '../../../apps/admin/src/ledger/ledger.repository';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const DAY_MS = 86_400_000;
const FIRST = new Date('2030-06-15T11:59:00.000Z');
const DAY = new Date('2030-06-15T00:00:00.000Z');

/** A row as the writer upserts it: `attempts` and `atMs` order the outcomes of a delivery. */
function row(
  id: string,
  attempts: number,
  atMs: number,
  fields: Partial<LedgerRow> = {},
): LedgerRow {
  const at = new Date(atMs);
  return {
    id,
    firstAttemptAt: FIRST,
    sourceId: 'src',
    destinationId: 'dest',
    messageId: `m-${id}`,
    callType: 'track',
    userId: 'u-1',
    anonymousId: null,
    event: 'Bought',
    state: 'retrying',
    reason: 'http_5xx',
    lastStatus: 503,
    lastDetail: 'HTTP 503',
    lastLatencyMs: 12.5,
    attempts,
    nextAttemptAt: new Date(atMs + 10_000),
    updatedAt: at,
    history: [{ attempts, at: at.toISOString(), result: fields.state ?? 'retrying' }],
    replayOf: null,
    ...fields,
  };
}

function pointer(id: string, fields: Partial<DeadPointer> = {}): DeadPointer {
  return {
    id,
    firstAttemptAt: FIRST,
    sourceId: 'src',
    destinationId: 'dest',
    messageId: `m-${id}`,
    callType: 'track',
    userId: 'u-1',
    anonymousId: null,
    updatedAt: new Date(FIRST.getTime() + 60_000),
    partition: 2,
    offset: '41',
    reason: 'http_4xx',
    lastStatus: 410,
    ...fields,
  };
}

/** What a test reads back of a row. */
interface Stored {
  state: string;
  attempts: number;
  reason: string | null;
  last_status: number | null;
  event: string | null;
  history: { attempts: number }[];
  dead_partition: number | null;
  dead_offset: string | null;
  replay_of: string | null;
  user_id: string | null;
  anonymous_id: string | null;
}

describe(LedgerRepository.name, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let repository: LedgerRepository;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    repository = new LedgerRepository(dataSource);
    await repository.createPartition(partitionName(DAY), DAY, new Date(DAY.getTime() + DAY_MS));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function stored(id: string): Promise<Stored | undefined> {
    const rows: Stored[] = await dataSource.query(
      `SELECT "state", "attempts", "reason", "last_status", "event", "history",
              "dead_partition", "dead_offset", "replay_of", "user_id", "anonymous_id"
         FROM "delivery_ledger" WHERE "id" = $1`,
      [id],
    );
    expect(rows.length).toBeLessThanOrEqual(1);
    return rows[0];
  }

  it('inserts a row per delivery of a batch', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await repository.upsertRows(ids.map((id) => row(id, 1, FIRST.getTime())));
    for (const id of ids) {
      await expect(stored(id)).resolves.toMatchObject({ state: 'retrying', attempts: 1 });
    }
  });

  it("keeps the call's user ids, and a pointer does not erase them", async () => {
    const id = randomUUID();
    await repository.upsertRows([row(id, 1, FIRST.getTime(), { anonymousId: 'a-1' })]);
    await repository.upsertPointers([pointer(id, { userId: null, anonymousId: null })]);
    await expect(stored(id)).resolves.toMatchObject({ user_id: 'u-1', anonymous_id: 'a-1' });
  });

  it('gives a placeholder row the user ids of its dead letter', async () => {
    const id = randomUUID();
    await repository.upsertPointers([pointer(id, { anonymousId: 'a-2' })]);
    await expect(stored(id)).resolves.toMatchObject({ user_id: 'u-1', anonymous_id: 'a-2' });
  });

  it('replaces the state with a newer outcome and appends its history', async () => {
    const id = randomUUID();
    await repository.upsertRows([row(id, 1, FIRST.getTime())]);
    await repository.upsertRows([
      row(id, 2, FIRST.getTime() + 10_000, { state: 'delivered', reason: null, lastStatus: 200 }),
    ]);
    const found = await stored(id);
    expect(found).toMatchObject({
      state: 'delivered',
      attempts: 2,
      reason: null,
      last_status: 200,
    });
    expect(found?.history.map((h) => h.attempts)).toEqual([1, 2]);
  });

  it.each([
    ['fewer attempts', 1, 60_000],
    ['as many attempts, earlier', 2, 5_000],
    ['the same outcome again', 2, 10_000],
  ])('ignores an outcome that comes late with %s', async (_what, attempts, afterMs) => {
    const id = randomUUID();
    await repository.upsertRows([
      row(id, 2, FIRST.getTime() + 10_000, { state: 'dead', reason: 'http_4xx' }),
    ]);
    await repository.upsertRows([row(id, attempts, FIRST.getTime() + afterMs)]);
    const found = await stored(id);
    expect(found).toMatchObject({ state: 'dead', attempts: 2, reason: 'http_4xx' });
    expect(found?.history).toHaveLength(1);
  });

  it('takes a later outcome of as many attempts (a move without an attempt)', async () => {
    const id = randomUUID();
    await repository.upsertRows([row(id, 3, FIRST.getTime())]);
    await repository.upsertRows([
      row(id, 3, FIRST.getTime() + 1, { state: 'discarded', reason: 'destination_disabled' }),
    ]);
    await expect(stored(id)).resolves.toMatchObject({ state: 'discarded', attempts: 3 });
  });

  it('keeps the event and the replayed delivery when a newer outcome lacks them', async () => {
    const id = randomUUID();
    const replayOf = randomUUID();
    await repository.upsertRows([row(id, 1, FIRST.getTime(), { replayOf })]);
    await repository.upsertRows([row(id, 2, FIRST.getTime() + 1, { event: null })]);
    await expect(stored(id)).resolves.toMatchObject({ event: 'Bought', replay_of: replayOf });
  });

  it('makes a placeholder from a dead letter that comes first, which its outcome overwrites', async () => {
    const id = randomUUID();
    await repository.upsertPointers([pointer(id)]);
    // Until its outcome comes, the placeholder says why it died and where the letter sits.
    await expect(stored(id)).resolves.toMatchObject({
      state: 'dead',
      attempts: -1,
      reason: 'http_4xx',
      last_status: 410,
      dead_partition: 2,
      dead_offset: '41',
    });
    await repository.upsertRows([
      row(id, 3, FIRST.getTime() + 30_000, { state: 'dead', reason: 'http_5xx', lastStatus: 500 }),
    ]);
    const found = await stored(id);
    expect(found).toMatchObject({
      state: 'dead',
      attempts: 3,
      reason: 'http_5xx',
      last_status: 500,
      dead_partition: 2,
      dead_offset: '41',
    });
    expect(found?.history.map((h) => h.attempts)).toEqual([3]);
  });

  it('adds a dead letter that comes after its outcome without changing the outcome', async () => {
    const id = randomUUID();
    await repository.upsertRows([
      row(id, 2, FIRST.getTime(), { state: 'dead', reason: 'http_4xx' }),
    ]);
    await repository.upsertPointers([pointer(id, { offset: '7', reason: 'other', lastStatus: 1 })]);
    await expect(stored(id)).resolves.toMatchObject({
      state: 'dead',
      attempts: 2,
      reason: 'http_4xx',
      dead_offset: '7',
    });
  });

  it('refuses a row for a day without a partition', async () => {
    const later = new Date(FIRST.getTime() + 5 * DAY_MS);
    await expect(
      repository.upsertRows([{ ...row(randomUUID(), 1, later.getTime()), firstAttemptAt: later }]),
    ).rejects.toThrow(/no partition/);
  });

  it('makes a partition once, even when asked again, and drops it', async () => {
    const day = new Date(DAY.getTime() + DAY_MS);
    const name = partitionName(day);
    await repository.createPartition(name, day, new Date(day.getTime() + DAY_MS));
    await repository.createPartition(name, day, new Date(day.getTime() + DAY_MS));
    await expect(repository.partitionNames()).resolves.toEqual(
      expect.arrayContaining([partitionName(DAY), name]),
    );
    await repository.dropPartition(name);
    await expect(repository.partitionNames()).resolves.not.toContain(name);
  });
});
