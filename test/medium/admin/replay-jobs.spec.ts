import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { createSettingsDataSource } from '@app/settings';

import {
  JobFilter,
  ReplayJobsRepository,
} from '../../../apps/admin/src/deliveries/replay-jobs.repository';
import { partitionName } from '../../../apps/admin/src/ledger/ledger-partitions';
import { LedgerRow } from '../../../apps/admin/src/ledger/ledger-rows';
import { LedgerRepository } from '../../../apps/admin/src/ledger/ledger.repository';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const DAY = new Date('2030-06-15T00:00:00.000Z');
const DAY_MS = 86_400_000;
const NOW = new Date('2030-06-16T00:00:00.000Z');

/** A dead row of the ledger, `n` seconds into the day, at partition 0 offset n. */
function deadRow(destinationId: string, n: number, reason = 'http_4xx'): LedgerRow {
  const first = new Date(DAY.getTime() + n * 1_000);
  return {
    id: randomUUID(),
    firstAttemptAt: first,
    sourceId: 'src',
    destinationId,
    messageId: `m-${n}`,
    userId: null,
    anonymousId: null,
    callType: 'track',
    event: 'Bought',
    state: 'dead',
    reason,
    lastStatus: 410,
    lastDetail: 'HTTP 410',
    lastLatencyMs: 3,
    attempts: 1,
    nextAttemptAt: null,
    updatedAt: new Date(first.getTime() + 1_000),
    history: [],
    replayOf: null,
  };
}

/**
 * The replay jobs' SQL against PostgreSQL: which rows a job covers and in which order, and
 * the claim of jobs left behind, which two instances must never both win.
 */
describe(ReplayJobsRepository.name, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let jobs: ReplayJobsRepository;
  let ledger: LedgerRepository;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 6 }).initialize();
    jobs = new ReplayJobsRepository(dataSource);
    ledger = new LedgerRepository(dataSource);
    await ledger.createPartition(partitionName(DAY), DAY, new Date(DAY.getTime() + DAY_MS));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Stores dead rows with their dead-letter positions; answers them in order. */
  async function deadRows(destinationId: string, ns: number[], reason?: string) {
    const rows = ns.map((n) => deadRow(destinationId, n, reason));
    await ledger.upsertRows(rows);
    await ledger.upsertPointers(
      rows.map((r, i) => ({ ...r, updatedAt: r.updatedAt, partition: 0, offset: String(ns[i]) })),
    );
    return rows;
  }

  function filterOf(destinationId: string, fields: Partial<JobFilter> = {}): JobFilter {
    const to = new Date(DAY.getTime() + DAY_MS);
    const filter = { destinationId, from: DAY, to, reason: undefined, notReplayed: false };
    return { ...filter, deadBy: NOW, ...fields };
  }

  /** A running job whose heartbeat was at `heartbeatAt` (null: let go). */
  async function runningJob(destinationId: string, heartbeatAt: Date | null): Promise<string> {
    const job = await jobs.insert({ id: randomUUID(), filter: filterOf(destinationId), total: 3 });
    await dataSource.query(`UPDATE "replay_job" SET "heartbeat_at" = $2 WHERE "id" = $1`, [
      job.id,
      heartbeatAt,
    ]);
    return job.id;
  }

  it('counts and pages the dead rows of a filter in (first attempt, id) order, without overlap', async () => {
    const destinationId = randomUUID();
    const rows = await deadRows(destinationId, [30, 10, 20, 40, 50]);
    const filter = filterOf(destinationId);
    await expect(jobs.count(filter)).resolves.toBe(5);
    const first = await jobs.page(filter, undefined, 2);
    const second = await jobs.page(filter, first[1], 2);
    const third = await jobs.page(filter, second[1], 2);
    const seen = [...first, ...second, ...third].map((r) => r.id);
    const byTime = [...rows].sort((a, b) => +a.firstAttemptAt - +b.firstAttemptAt);
    expect(seen).toEqual(byTime.map((r) => r.id));
    await expect(jobs.page(filter, third[0], 2)).resolves.toEqual([]);
  });

  it.each([
    ['another reason', { reason: 'http_5xx' }, 0],
    ['the same reason', { reason: 'http_4xx' }, 2],
    ['a range after the rows', { from: new Date(DAY.getTime() + 3_600_000) }, 0],
    ['rows dead after the job began', { deadBy: DAY }, 0],
  ])('covers only the filter: %s', async (_name, fields, expected) => {
    const destinationId = randomUUID();
    await deadRows(destinationId, [1, 2]);
    await expect(jobs.count(filterOf(destinationId, fields))).resolves.toBe(expected);
  });

  it('stores a job that covers nothing as finished', async () => {
    const job = await jobs.insert({ id: randomUUID(), filter: filterOf(randomUUID()), total: 0 });
    expect(job).toMatchObject({ status: 'finished', total: 0 });
    expect(job.finished_at).toEqual(NOW);
  });

  it('lets one of two concurrent claims take each job left behind', async () => {
    const destinationId = randomUUID();
    const stale = new Date(NOW.getTime() - 120_000);
    const ids = [await runningJob(destinationId, stale), await runningJob(destinationId, null)];
    const staleBefore = new Date(NOW.getTime() - 60_000);
    const claims = await Promise.all(
      Array.from({ length: 4 }, () => jobs.claimLeftBehind(NOW, staleBefore)),
    );
    const claimed = claims.flat().map((job) => job.id);
    expect(claimed.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    await expect(jobs.claimLeftBehind(NOW, staleBefore)).resolves.toEqual([]);
  });

  it('leaves a job with a fresh heartbeat, and a finished one, to their owners', async () => {
    const destinationId = randomUUID();
    const fresh = await runningJob(destinationId, new Date(NOW.getTime() - 1_000));
    const finished = await runningJob(destinationId, null);
    await jobs.finish(finished, 'finished', null, NOW);
    const claimed = await jobs.claimLeftBehind(NOW, new Date(NOW.getTime() - 60_000));
    expect(claimed.map((job) => job.id)).not.toContain(fresh);
    expect(claimed.map((job) => job.id)).not.toContain(finished);
  });

  it('resumes a claimed job from its checkpoint, with the counts it had then', async () => {
    const destinationId = randomUUID();
    const id = await runningJob(destinationId, null);
    await jobs.progress(id, 2, 1);
    await jobs.checkpoint(id, { micros: '123', id: destinationId });
    await jobs.progress(id, 5, 0); // a page under way when the instance died
    const [claimed] = (await jobs.claimLeftBehind(NOW, NOW)).filter((job) => job.id === id);
    expect(claimed).toMatchObject({
      replayed: 2,
      failed: 1,
      checkpoint: { micros: '123', id: destinationId, replayed: 2, failed: 1 },
    });
  });

  it('lets go of a job: its heartbeat is cleared, and any instance may take it', async () => {
    const id = await runningJob(randomUUID(), NOW);
    await jobs.letGo(id);
    const claimed = await jobs.claimLeftBehind(NOW, new Date(NOW.getTime() - 60_000));
    expect(claimed.map((job) => job.id)).toContain(id);
  });

  it('finds a job target: no source, no destination, the oldest or one by id', async () => {
    await expect(jobs.destinationOf(randomUUID(), undefined)).resolves.toEqual({
      kind: 'no_source',
    });
    const [source]: { id: string }[] = await dataSource.query(
      `INSERT INTO "source" ("name", "write_key") VALUES ('s', $1) RETURNING "id"`,
      ['k'.repeat(40) + randomUUID()],
    );
    await expect(jobs.destinationOf(source.id, undefined)).resolves.toEqual({
      kind: 'no_destination',
    });
    await expect(jobs.destinationOf(source.id, 'not-a-uuid')).resolves.toEqual({
      kind: 'no_destination',
    });
    const [d]: { id: string }[] = await dataSource.query(
      `INSERT INTO "destination" ("source_id", "kind", "name") VALUES ($1, 'webhooks', 'd') RETURNING "id"`,
      [source.id],
    );
    await expect(jobs.destinationOf(source.id, undefined)).resolves.toMatchObject({
      kind: 'found',
      destination: { id: d.id },
    });
    await expect(jobs.destinationOf(source.id, d.id)).resolves.toMatchObject({ kind: 'found' });
  });
});
