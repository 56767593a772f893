import { randomUUID } from 'node:crypto';

import { deliveryIdFor, HEADER, TOPIC } from '@app/contracts';
import {
  BatchProducer,
  headerText,
  IncomingRecord,
  KafkaConnection,
  OutgoingRecord,
} from '@app/kafka';

import { ReplayJobsService } from '../../../apps/admin/src/deliveries/replay-jobs.service';
import { AdminHarness } from '../../helpers/admin-harness';
import { insertLedgerRows, LedgerFixture } from '../../helpers/ledger-fixtures';
import { eventually, scrapeMetric } from '../../helpers/services';
import { TopicReader } from '../../helpers/topic-reader';

/**
 * Replays through the admin API against real Kafka: dead letters produced to the (prefixed)
 * dead-letter topic, ledger rows written with SQL pointing at them, and the replays read back
 * from the deliveries topic.
 */
const h = new AdminHarness();
let deliveries: TopicReader;
let enabled: { sourceId: string; destinationId: string };
let disabled: { sourceId: string; destinationId: string };
let bare: string;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();
/** Partitions of the test topics (the apps' default). */
const PARTITIONS = 6;

beforeAll(async () => {
  await h.start();
  deliveries = await new TopicReader(h.app.get(KafkaConnection), [TOPIC.deliveries]).start();
  enabled = await source({ webhook: true, enable: true });
  disabled = await source({ webhook: true, enable: false });
  bare = (await h.call('POST', '/admin/v1/sources', { name: 'bare' })).body.id as string;
}, 60_000);
afterAll(async () => {
  await deliveries?.stop();
  await h.close();
});

async function source(options: { webhook: boolean; enable: boolean }) {
  const sourceId = (await h.call('POST', '/admin/v1/sources', { name: 'web' })).body.id as string;
  const dest = `/admin/v1/sources/${sourceId}/destination`;
  const destinationId = (await h.call('POST', dest, { name: 'hooks' })).body.id as string;
  if (options.webhook) await h.call('POST', `${dest}/webhooks`, { url: 'https://example.com/h' });
  if (options.enable) expect((await h.call('POST', `${dest}/enable`)).status).toBe(200);
  return { sourceId, destinationId };
}

/** Offsets of the dead-letter topic so far: only this file writes to it, in order. */
const nextOffset = new Map<number, number>();
/** Where each delivery's dead letter was produced. */
const positionOf = new Map<string, { partition: number; offset: string }>();

/** A dead letter as the dispatcher writes one, and the ledger row of its delivery. */
interface Letter {
  readonly record: OutgoingRecord;
  readonly row: LedgerFixture & { id: string };
}

function letter(
  to: { sourceId: string; destinationId: string },
  firstAttemptAt: number,
  options: { reason?: string; partition?: number } = {},
): Letter {
  const messageId = randomUUID();
  const partition = options.partition ?? 0;
  const reason = options.reason ?? 'http_4xx';
  const record: OutgoingRecord = {
    topic: TOPIC.deliveriesDead,
    partition,
    key: `${to.destinationId}:user-${messageId}`,
    value: Buffer.from(
      JSON.stringify({ type: 'track', event: 'Café ☕', messageId, properties: { n: 1.5 } }),
    ),
    headers: {
      [HEADER.sourceId]: to.sourceId,
      [HEADER.callType]: 'track',
      [HEADER.messageId]: messageId,
      [HEADER.destinationId]: to.destinationId,
      [HEADER.event]: 'Café ☕',
      [HEADER.reason]: reason,
      [HEADER.attempt]: '3',
      [HEADER.firstAttemptAt]: String(firstAttemptAt),
      [HEADER.lastAttemptAt]: String(firstAttemptAt + MINUTE),
      [HEADER.lastStatus]: '400',
      [HEADER.webhookIds]: 'w-1',
    },
  };
  return {
    record,
    row: {
      id: deliveryIdFor(to.destinationId, messageId),
      firstAttemptAt: iso(firstAttemptAt),
      sourceId: to.sourceId,
      destinationId: to.destinationId,
      messageId,
      state: 'dead',
      reason,
      lastStatus: 400,
      attempts: 3,
      updatedAt: iso(firstAttemptAt + MINUTE),
    },
  };
}

/** Produces the dead letters (one send) and writes their rows pointing at them. */
async function deadLetters(letters: readonly Letter[]): Promise<string[]> {
  await h.app.get(BatchProducer).send(letters.map((l) => l.record));
  const rows = letters.map(({ record, row }) => {
    const partition = record.partition!;
    const offset = nextOffset.get(partition) ?? 0;
    nextOffset.set(partition, offset + 1);
    positionOf.set(row.id, { partition, offset: String(offset) });
    return { ...row, deadPartition: partition, deadOffset: String(offset) };
  });
  return insertLedgerRows(h.db.url, rows);
}

/** Replays read so far of the delivery `id`. */
function replaysOf(id: string): IncomingRecord[] {
  return deliveries.withHeader(TOPIC.deliveries, HEADER.replayOf, id);
}

async function replays(id: string): Promise<number> {
  return (await h.call('GET', `/admin/v1/deliveries/${id}`)).body.replays as number;
}

describe('POST /admin/v1/deliveries/:id/replay', () => {
  const T = Date.now() - 2 * HOUR;

  it("produces the dead letter's bytes again as a new delivery with a fresh window", async () => {
    const dead = letter(enabled, T, { partition: 3 });
    const [id] = await deadLetters([dead]);
    const answer = await h.call('POST', `/admin/v1/deliveries/${id}/replay`);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ deliveryId: expect.any(String), replayOf: id });
    const newId = answer.body.deliveryId as string;
    expect(newId).not.toBe(id);

    const [replay] = await deliveries.waitFor(
      TOPIC.deliveries,
      (r) => headerText(r, HEADER.deliveryId) === newId,
    );
    expect(replay.value?.equals(dead.record.value as Buffer)).toBe(true);
    expect(replay.key?.toString()).toBe(dead.record.key);
    const headers = Object.fromEntries(
      Object.entries(replay.headers).map(([name, value]) => [name, value?.toString()]),
    );
    expect(headers).toEqual({
      [HEADER.sourceId]: enabled.sourceId,
      [HEADER.callType]: 'track',
      [HEADER.messageId]: dead.row.messageId,
      [HEADER.destinationId]: enabled.destinationId,
      [HEADER.event]: 'Café ☕',
      [HEADER.deliveryId]: newId,
      [HEADER.replayOf]: id,
    });
    expect(await replays(id)).toBe(1);
  });

  it('replays an already replayed delivery again, and counts both', async () => {
    const [id] = await deadLetters([letter(enabled, T + 1_000)]);
    const counted = () => scrapeMetric(h.url, 'sluice_admin_replays_total', { kind: 'single' });
    const before = await counted();
    const first = await h.call('POST', `/admin/v1/deliveries/${id}/replay`);
    const second = await h.call('POST', `/admin/v1/deliveries/${id}/replay`);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.body.deliveryId).not.toBe(first.body.deliveryId);
    await eventually(() => (replaysOf(id).length === 2 ? true : undefined));
    const ids = replaysOf(id).map((r) => headerText(r, HEADER.deliveryId));
    expect(ids.sort()).toEqual([first.body.deliveryId, second.body.deliveryId].sort());
    expect(await replays(id)).toBe(2);
    // The original names its latest replay.
    const original = await h.call('GET', `/admin/v1/deliveries/${id}`);
    expect(original.body.lastReplayId).toBe(second.body.deliveryId);
    expect((await counted()) - before).toBe(2);
  });

  describe('refusals', () => {
    it('404 delivery_not_found for an unknown delivery, 400 for an id that is not a UUID', async () => {
      const unknown = await h.call('POST', `/admin/v1/deliveries/${randomUUID()}/replay`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ code: 'delivery_not_found', message: expect.any(String) });
      const malformed = await h.call('POST', '/admin/v1/deliveries/nope/replay');
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toContain('id');
    });

    /** A ledger row of a dead delivery with no dead letter produced (the writer leaves it be). */
    const rowOnly = async (extra: Partial<LedgerFixture>) =>
      (await insertLedgerRows(h.db.url, [{ ...letter(enabled, T + 2_000).row, ...extra }]))[0];

    it.each([
      ['a delivered delivery', 'not_replayable', () => rowOnly({ state: 'delivered' })],
      ['a dead one whose dead letter is not recorded yet', 'not_replayable', () => rowOnly({})],
      [
        'a dead one whose dead letter is gone',
        'not_replayable',
        () => rowOnly({ deadPartition: 0, deadOffset: '999999' }),
      ],
      [
        "a dead one pointing at another delivery's dead letter",
        'not_replayable',
        async () => {
          const [other] = await deadLetters([letter(enabled, T + 2_000)]);
          const { partition, offset } = positionOf.get(other)!;
          return rowOnly({ deadPartition: partition, deadOffset: offset });
        },
      ],
      [
        'one of a disabled destination',
        'destination_disabled',
        async () => (await deadLetters([letter(disabled, T + 2_000)]))[0],
      ],
      [
        'one of a deleted destination',
        'destination_disabled',
        async () => {
          const gone = { sourceId: enabled.sourceId, destinationId: randomUUID() };
          return (await deadLetters([letter(gone, T + 2_000)]))[0];
        },
      ],
    ])('409 for %s: %s', async (_label, code, make) => {
      const id = await make();
      const answer = await h.call('POST', `/admin/v1/deliveries/${id}/replay`);
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ code, message: expect.any(String) });
      expect(await replays(id)).toBe(0);
      expect(replaysOf(id)).toEqual([]);
    });
  });
});

describe('bulk replay', () => {
  const replayPath = (sourceId: string) => `/admin/v1/sources/${sourceId}/destination/replay`;
  const range = (from: number, to: number) => ({ from: iso(from), to: iso(to) });

  /** Polls the job until it is no longer running; answers every state seen. */
  async function untilDone(jobId: string, timeoutMs: number): Promise<Record<string, unknown>[]> {
    const seen: Record<string, unknown>[] = [];
    await eventually(
      async () => {
        const answer = await h.call('GET', `/admin/v1/replays/${jobId}`);
        expect(answer.status).toBe(200);
        seen.push(answer.body as Record<string, unknown>);
        return answer.body.status === 'running' ? undefined : true;
      },
      timeoutMs,
      `replay job ${jobId}`,
    );
    return seen;
  }

  it.each([
    ['an unknown source', () => replayPath(randomUUID()), 404, 'source_not_found'],
    ['a source without destination', () => replayPath(bare), 404, 'destination_not_found'],
    ['a disabled destination', () => replayPath(disabled.sourceId), 409, 'destination_disabled'],
  ])('refuses %s', async (_label, path, status, code) => {
    const answer = await h.call('POST', path(), range(Date.now() - HOUR, Date.now()));
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ code, message: expect.any(String) });
  });

  it.each([
    ['a range longer than the retention', 'to', range(Date.now() - 4 * 24 * HOUR, Date.now())],
    ['an empty range', 'to', range(Date.now(), Date.now())],
    ['no end', 'to', { from: iso(Date.now()) }],
    ['a time without a zone', 'from', { from: '2026-11-25T10:00:00', to: iso(Date.now()) }],
    ['an empty reason', 'reason', { ...range(Date.now() - HOUR, Date.now()), reason: '' }],
    ['an unknown reason', 'reason', { ...range(Date.now() - HOUR, Date.now()), reason: 'oops' }],
    ['a notReplayed that is no boolean', 'notReplayed', { ...range(0, 1), notReplayed: 'yes' }],
  ])('400 for %s, naming %s', async (_label, field, body) => {
    const answer = await h.call('POST', replayPath(enabled.sourceId), body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.message).toContain(field);
  });

  it('replays only the dead letters never replayed, with notReplayed', async () => {
    const T = Date.now() - 4 * HOUR;
    const [replayed, fresh] = await deadLetters([letter(enabled, T), letter(enabled, T + 1)]);
    expect((await h.call('POST', `/admin/v1/deliveries/${replayed}/replay`)).status).toBe(202);
    const answer = await h.call('POST', replayPath(enabled.sourceId), {
      ...range(T, T + MINUTE),
      notReplayed: true,
    });
    expect(answer.body).toMatchObject({ total: 1 });
    await untilDone(answer.body.id as string, 20_000);
    await eventually(() => (replaysOf(fresh).length === 1 ? true : undefined));
    expect(replaysOf(replayed)).toHaveLength(1);
    // The job is listed, newest first, with the destination's others.
    const list = await h.call('GET', `/admin/v1/replays?destinationId=${enabled.destinationId}`);
    expect(list.status).toBe(200);
    expect(list.body[0]).toMatchObject({ id: answer.body.id, status: 'finished', replayed: 1 });
    const one = await h.call('GET', '/admin/v1/replays?limit=1');
    expect(one.body).toHaveLength(1);
  });

  it.each(['limit=0', 'limit=101', 'destinationId=nope'])(
    'GET /admin/v1/replays?%s: 400',
    async (query) => {
      const answer = await h.call('GET', `/admin/v1/replays?${query}`);
      expect(answer).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    },
  );

  it('404 replay_not_found for an unknown job', async () => {
    const answer = await h.call('GET', `/admin/v1/replays/${randomUUID()}`);
    expect(answer).toMatchObject({ status: 404, body: { code: 'replay_not_found' } });
  });

  it('replays only the dead letters with the reason, and counts those gone as failed', async () => {
    const T = Date.now() - 3 * HOUR;
    const timeouts = await deadLetters(
      [0, 1, 2].map((i) => letter(enabled, T + i, { reason: 'timeout', partition: i })),
    );
    const others = await deadLetters(
      [3, 4].map((i) => letter(enabled, T + i, { reason: 'http_4xx', partition: 1 })),
    );
    // Its dead letter is no longer on the topic (no letter is produced: the writer leaves it).
    const [gone] = await insertLedgerRows(h.db.url, [
      {
        ...letter(enabled, T + 5, { reason: 'timeout' }).row,
        deadPartition: 0,
        deadOffset: '999999',
      },
    ]);

    const answer = await h.call('POST', replayPath(enabled.sourceId), {
      ...range(T, T + MINUTE),
      reason: 'timeout',
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ destinationId: enabled.destinationId, total: 4 });
    const [last] = (await untilDone(answer.body.id as string, 20_000)).slice(-1);
    expect(last).toMatchObject({
      status: 'finished',
      total: 4,
      replayed: 3,
      failed: 1,
      error: null,
    });
    expect(last.finishedAt).toEqual(expect.any(String));
    await eventually(() => (timeouts.every((id) => replaysOf(id).length === 1) ? true : undefined));
    for (const id of [...others, gone]) expect(replaysOf(id)).toEqual([]);
  });

  it('replays 10,000 dead letters of a time range, each exactly once, reporting progress', async () => {
    const COUNT = 10_000;
    const T = Date.now() - 4 * HOUR;
    const letters = Array.from({ length: COUNT }, (_, i) =>
      letter(enabled, T + i, { partition: i % PARTITIONS }),
    );
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i += 2_500)
      ids.push(...(await deadLetters(letters.slice(i, i + 2_500))));
    // Just outside the range, and in it but delivered: not replayed.
    const outside = await deadLetters([letter(enabled, T - 1), letter(enabled, T + COUNT)]);
    const [delivered] = await insertLedgerRows(h.db.url, [
      { ...letter(enabled, T + 5).row, state: 'delivered' },
    ]);

    const started = Date.now();
    const answer = await h.call('POST', replayPath(enabled.sourceId), range(T, T + COUNT));
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ status: 'running', total: COUNT, replayed: 0, failed: 0 });
    const seen = await untilDone(answer.body.id as string, 60_000);
    const last = seen[seen.length - 1];
    expect(last).toMatchObject({ status: 'finished', total: COUNT, replayed: COUNT, failed: 0 });
    const progress = seen.map((s) => s.replayed as number);
    expect(progress).toEqual([...progress].sort((x, y) => x - y));

    const wanted = new Set(ids);
    const replayed = await eventually(
      () => {
        const records = deliveries.records.filter((r) =>
          wanted.has(headerText(r, HEADER.replayOf) ?? ''),
        );
        return records.length >= COUNT ? records : undefined;
      },
      30_000,
      `${COUNT} replays`,
    );
    const perId = new Map<string, number>();
    for (const r of replayed) {
      const of = headerText(r, HEADER.replayOf)!;
      perId.set(of, (perId.get(of) ?? 0) + 1);
    }
    expect(perId.size).toBe(COUNT);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    for (const id of [...outside, delivered]) expect(replaysOf(id)).toEqual([]);
    const [counted] = await h.sql<{ n: string }>(
      `SELECT count(*) AS n FROM "delivery_ledger" WHERE "id" = ANY($1::uuid[]) AND "replays" = 1`,
      [ids],
    );
    expect(Number(counted.n)).toBe(COUNT);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);

  it('takes up a job whose instance died from its checkpoint, and leaves a live one alone', async () => {
    const COUNT = 30;
    const T = Date.now() - 5 * HOUR;
    const ids = await deadLetters(
      Array.from({ length: COUNT }, (_, i) => letter(enabled, T + i, { partition: i % 3 })),
    );
    const job = async (heartbeatAt: Date, checkpoint: object | null) => {
      const id = randomUUID();
      await h.sql(
        `INSERT INTO "replay_job" ("id", "destination_id", "filter", "status", "total",
           "replayed", "created_at", "heartbeat_at", "checkpoint")
         VALUES ($1, $2, $3, 'running', $4, 12, now(), $5, $6)`,
        [id, enabled.destinationId, range(T, T + COUNT), COUNT, heartbeatAt, checkpoint],
      );
      return id;
    };
    // Its instance died two minutes ago, having finished a page of ten rows (the counts then)
    // and counted two more of the next.
    const dead = await job(new Date(Date.now() - 2 * MINUTE), {
      micros: String((T + 9) * 1000),
      id: ids[9],
      replayed: 10,
      failed: 0,
    });
    const live = await job(new Date(), null);

    const taken = await h.app.get(ReplayJobsService).resumeLeftBehind();
    expect(taken).toContain(dead);
    expect(taken).not.toContain(live);
    const [last] = (await untilDone(dead, 30_000)).slice(-1);
    expect(last).toMatchObject({ status: 'finished', total: COUNT, replayed: COUNT, failed: 0 });
    await eventually(() =>
      ids.slice(10).every((id) => replaysOf(id).length === 1) ? true : undefined,
    );
    for (const id of ids.slice(0, 10)) expect(replaysOf(id)).toEqual([]);
    await h.sql(`UPDATE "replay_job" SET "status" = 'failed' WHERE "id" = $1`, [live]);
  }, 60_000);
});
