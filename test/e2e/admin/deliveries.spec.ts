import { randomUUID } from 'node:crypto';

import { AdminHarness } from '../../helpers/admin-harness';
import { insertLedgerRows, LedgerFixture } from '../../helpers/ledger-fixtures';

/**
 * The delivery ledger's read API on rows written straight into `delivery_ledger`: filters,
 * one delivery with its attempts, refusals of malformed input, keyset pages that hold while
 * rows are added, and counts by outcome. Each test's rows sit in a time block of their own.
 */
const h = new AdminHarness();
beforeAll(() => h.start(), 60_000);
afterAll(() => h.close());

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Well inside the ledger's retention (3 days by default, today included). */
const BASE = Math.floor((Date.now() - 6 * HOUR) / 1000) * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

const insert = (rows: LedgerFixture[]) => insertLedgerRows(h.db.url, rows);

/** The ids of a page of deliveries. */
function itemIds(body: unknown): string[] {
  return (body as { items: { id: string }[] }).items.map((item) => item.id);
}

async function ids(query: string): Promise<string[]> {
  const answer = await h.call('GET', `/admin/v1/deliveries?${query}`);
  expect(answer.status).toBe(200);
  return itemIds(answer.body);
}

describe('GET /admin/v1/deliveries', () => {
  const S1 = randomUUID();
  const S2 = randomUUID();
  const D1 = randomUUID();
  const D2 = randomUUID();
  const shared = `m-shared-${randomUUID()}`;
  const block = `from=${iso(BASE)}&to=${iso(BASE + 10_000)}`;
  let a: string, b: string, c: string, d: string, e: string, e2: string, f: string;

  beforeAll(async () => {
    const one = { sourceId: S1, destinationId: D1 };
    const two = { sourceId: S2, destinationId: D2 };
    [a, b, c, d, e, e2, f] = await insert([
      {
        ...one,
        firstAttemptAt: iso(BASE + 1_000),
        state: 'delivered',
        lastStatus: 200,
        userId: 'u-a',
        anonymousId: 'anon-1',
      },
      {
        ...one,
        firstAttemptAt: iso(BASE + 2_000),
        anonymousId: 'anon-1',
        event: 'Signed Up',
        state: 'dead',
        reason: 'http_4xx',
        lastStatus: 400,
        lastDetail: 'HTTP 400',
        lastLatencyMs: 12.5,
        attempts: 3,
        deadPartition: 1,
        deadOffset: '42',
        updatedAt: iso(BASE + 62_000),
        history: [
          { attempts: 1, at: iso(BASE + 2_000), result: 'retrying', reason: 'http_5xx' },
          { attempts: 3, at: iso(BASE + 62_000), result: 'dead', reason: 'http_4xx' },
        ],
      },
      {
        ...one,
        firstAttemptAt: iso(BASE + 3_000),
        state: 'retrying',
        reason: 'http_5xx',
        nextAttemptAt: iso(BASE + 13_000),
      },
      {
        ...two,
        firstAttemptAt: iso(BASE + 4_000),
        callType: 'page',
        state: 'discarded',
        reason: 'disabled',
      },
      { ...two, firstAttemptAt: iso(BASE + 5_000), state: 'dead', reason: 'timeout' },
      { ...two, firstAttemptAt: iso(BASE + 5_500), messageId: shared },
      { ...one, firstAttemptAt: iso(BASE + 6_000), state: 'delivered', messageId: shared },
    ]);
  });

  it('answers newest first attempt first within a time range (to exclusive)', async () => {
    expect(await ids(block)).toEqual([f, e2, e, d, c, b, a]);
    expect(await ids(`from=${iso(BASE + 2_000)}&to=${iso(BASE + 6_000)}`)).toEqual([
      e2,
      e,
      d,
      c,
      b,
    ]);
  });

  it.each([
    ['sourceId', () => `sourceId=${S1}`, () => [f, c, b, a]],
    ['sourceId in capitals', () => `sourceId=${S1.toUpperCase()}`, () => [f, c, b, a]],
    ['destinationId', () => `destinationId=${D2}`, () => [e2, e, d]],
    ['messageId', () => `messageId=${shared}`, () => [f, e2]],
    ['outcome', () => 'outcome=dead', () => [e, b]],
    ['reason', () => 'reason=http_4xx', () => [b]],
    ['several filters', () => `outcome=dead&sourceId=${S2}`, () => [e]],
    ['user, either id', () => 'user=anon-1', () => [b, a]],
    ['user, a userId', () => 'user=u-a', () => [a]],
    ['userId', () => 'userId=u-a', () => [a]],
    ['userId, not an anonymousId', () => 'userId=anon-1', () => []],
    ['anonymousId', () => 'anonymousId=anon-1', () => [b, a]],
    ['event', () => 'event=Signed%20Up', () => [b]],
    ['type', () => 'type=page', () => [d]],
    ['status', () => 'status=400', () => [b]],
    ['user and event', () => 'user=anon-1&event=Order%20Completed', () => [a]],
  ])('filters by %s', async (_label, query, expected) => {
    expect(await ids(`${block}&${query()}`)).toEqual(expected());
  });

  it('shows a delivery with ISO times and nulls for what it lacks', async () => {
    const answer = await h.call('GET', `/admin/v1/deliveries?${block}&outcome=retrying`);
    expect(answer.body).toEqual({
      items: [
        {
          id: c,
          sourceId: S1,
          destinationId: D1,
          // D1 is no destination of the settings tables (as one deleted since).
          destinationName: null,
          messageId: expect.any(String),
          type: 'track',
          event: 'Order Completed',
          userId: null,
          anonymousId: null,
          outcome: 'retrying',
          reason: 'http_5xx',
          lastStatus: null,
          lastDetail: null,
          lastLatencyMs: null,
          attempts: 1,
          firstAttemptAt: iso(BASE + 3_000),
          nextAttemptAt: iso(BASE + 13_000),
          updatedAt: iso(BASE + 4_000),
          deadLetter: null,
          replayOf: null,
          replays: 0,
          lastReplayId: null,
        },
      ],
      nextCursor: null,
    });
  });

  it("names each delivery's destination beside its id", async () => {
    const created = await h.call('POST', '/admin/v1/sources', { name: 'named' });
    const sourceId = created.body.id as string;
    const named = await h.call('POST', `/admin/v1/sources/${sourceId}/destinations`, {
      name: 'My CRM',
    });
    const at = BASE + 20 * MINUTE;
    const [id] = await insert([
      { sourceId, destinationId: named.body.id, firstAttemptAt: iso(at), state: 'delivered' },
    ]);
    const list = await h.call('GET', `/admin/v1/deliveries?sourceId=${sourceId}`);
    expect(list.body.items).toEqual([
      expect.objectContaining({ id, destinationId: named.body.id, destinationName: 'My CRM' }),
    ]);
    const one = await h.call('GET', `/admin/v1/deliveries/${id}`);
    expect(one.body).toMatchObject({ destinationName: 'My CRM' });
  });

  it('finds the deliveries of the destinations having a webhook URL', async () => {
    const created = await h.call('POST', '/admin/v1/sources', { name: 'by-url' });
    const sourceId = created.body.id as string;
    const url = `https://hooks.example.com/${randomUUID()}`;
    const withUrl = await h.call('POST', `/admin/v1/sources/${sourceId}/destinations`, {
      name: 'with url',
    });
    const hook = await h.call(
      'POST',
      `/admin/v1/sources/${sourceId}/destinations/${withUrl.body.id}/webhooks`,
      { url },
    );
    expect(hook.status).toBe(201);
    const at = BASE + 30 * MINUTE;
    const [hit] = await insert([
      { sourceId, destinationId: withUrl.body.id, firstAttemptAt: iso(at) },
      { sourceId, firstAttemptAt: iso(at + 1_000) },
    ]);
    const query = `sourceId=${sourceId}&webhookUrl=${encodeURIComponent(url)}`;
    expect(await ids(query)).toEqual([hit]);
    expect(await ids(`sourceId=${sourceId}&webhookUrl=https%3A%2F%2Fnone.example.com%2F`)).toEqual(
      [],
    );
  });

  it.each([
    ['an unknown type', 'type=Track'],
    ['a status out of range', 'status=99'],
    ['a status that is no number', 'status=5xx'],
    ['an empty user', 'user='],
    ['an unknown reason', 'reason=oops'],
  ])('refuses %s with 400 invalid_request', async (_what, query) => {
    const answer = await h.call('GET', `/admin/v1/deliveries?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request' });
  });

  it('gives a cursor when more rows match than the limit', async () => {
    const first = await h.call('GET', `/admin/v1/deliveries?${block}&limit=2`);
    expect(itemIds(first.body)).toEqual([f, e2]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const next = `${block}&limit=5&cursor=${first.body.nextCursor}`;
    const second = await h.call('GET', `/admin/v1/deliveries?${next}`);
    expect(itemIds(second.body)).toEqual([e, d, c, b, a]);
    expect(second.body.nextCursor).toBeNull();
  });

  it('GET :id answers the delivery with its attempts, oldest first', async () => {
    const answer = await h.call('GET', `/admin/v1/deliveries/${b}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: b,
      outcome: 'dead',
      reason: 'http_4xx',
      lastStatus: 400,
      lastDetail: 'HTTP 400',
      lastLatencyMs: 12.5,
      attempts: 3,
      firstAttemptAt: iso(BASE + 2_000),
      updatedAt: iso(BASE + 62_000),
      deadLetter: { partition: 1, offset: '42' },
      replays: 0,
    });
    const history = answer.body.history as { result: string }[];
    expect(history.map((x) => x.result)).toEqual(['retrying', 'dead']);
  });
});

describe('refusals', () => {
  it('needs the admin token', async () => {
    expect((await h.call('GET', '/admin/v1/deliveries', undefined, null)).status).toBe(401);
  });

  it.each([
    ['sourceId=not-a-uuid', 'sourceId'],
    ['destinationId=123', 'destinationId'],
    [`messageId=${'x'.repeat(201)}`, 'messageId'],
    ['outcome=lost', 'outcome'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=ten', 'limit'],
    ['from=yesterday', 'from'],
    ['from=2026-11-25T10:00:00', 'from'],
    ['to=2026-13-01T00:00:00Z', 'to'],
    ['colour=blue', 'colour'],
  ])('GET ?%s: 400 naming %s', async (query, field) => {
    const answer = await h.call('GET', `/admin/v1/deliveries?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 'invalid_request', message: expect.any(String) });
    expect(answer.body.message).toContain(field);
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['base64 of something else', Buffer.from('hello:world').toString('base64url')],
  ])('GET with a cursor that is %s: 400 invalid_cursor', async (_label, cursor) => {
    const answer = await h.call('GET', `/admin/v1/deliveries?cursor=${encodeURIComponent(cursor)}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 'invalid_cursor',
      message: expect.stringContaining('cursor'),
    });
  });

  it('GET :id with an id that is not a UUID: 400 naming id', async () => {
    const answer = await h.call('GET', '/admin/v1/deliveries/12345');
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.message).toContain('id');
  });

  it('GET :id of an unknown delivery: 404 delivery_not_found', async () => {
    const answer = await h.call('GET', `/admin/v1/deliveries/${randomUUID()}`);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ code: 'delivery_not_found', message: expect.any(String) });
  });

  it.each(['minutes=0', 'minutes=61', 'minutes=five'])('GET stats?%s: 400', async (query) => {
    const answer = await h.call('GET', `/admin/v1/deliveries/stats?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('minutes');
  });
});

describe('pagination while rows are added', () => {
  const START = BASE + HOUR;
  const block = `from=${iso(START)}&to=${iso(START + 10 * MINUTE)}`;

  /** A time with microseconds: `ms` plus `micros` (0..999). */
  const at = (ms: number, micros: number) =>
    iso(ms).replace('Z', `${String(micros).padStart(3, '0')}Z`);

  it('shows every row there at the start exactly once, and never one added before the page', async () => {
    // Ties on the whole time (ordered by id), and times one microsecond apart in one ms.
    const originals: LedgerFixture[] = Array.from({ length: 40 }, (_, i) => ({
      firstAttemptAt: at(START + MINUTE + Math.floor(i / 4), [0, 0, 1, 999][i % 4]),
    }));
    const originalIds = await insert(originals);
    const seen: string[] = [];
    const added = { newer: [] as string[], older: [] as string[] };
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `${block}&limit=7${cursor ? `&cursor=${cursor}` : ''}`;
      const answer = await h.call('GET', `/admin/v1/deliveries?${query}`);
      expect(answer.status).toBe(200);
      seen.push(...itemIds(answer.body));
      cursor = answer.body.nextCursor;
      pages += 1;
      // Between pages: a row newer than any shown, and one older than every row so far.
      added.newer.push(...(await insert([{ firstAttemptAt: at(START + 2 * MINUTE + pages, 5) }])));
      added.older.push(...(await insert([{ firstAttemptAt: at(START + 100 - pages, 5) }])));
    } while (cursor !== null && pages < 50);

    expect(new Set(seen).size).toBe(seen.length);
    for (const id of originalIds) expect(seen.filter((s) => s === id)).toHaveLength(1);
    for (const id of added.newer) expect(seen).not.toContain(id);
    // Older rows added before the last page are behind the cursor: they are shown.
    for (const id of added.older.slice(0, -1)) expect(seen).toContain(id);
    const expectedOriginals = originals
      .map((row, i) => ({ t: row.firstAttemptAt, id: originalIds[i] }))
      .sort((x, y) => (x.t === y.t ? (x.id < y.id ? 1 : -1) : x.t < y.t ? 1 : -1))
      .map((row) => row.id);
    expect(seen.filter((id) => originalIds.includes(id))).toEqual(expectedOriginals);
  });
});

describe('GET /admin/v1/deliveries/stats', () => {
  it('counts rows by outcome whose latest outcome came within the minutes', async () => {
    const now = Date.now();
    const recent = (state: LedgerFixture['state']): LedgerFixture => ({
      firstAttemptAt: iso(now - 2 * MINUTE),
      updatedAt: iso(now - MINUTE),
      state,
    });
    await insert([
      recent('delivered'),
      recent('delivered'),
      recent('retrying'),
      recent('dead'),
      recent('dead'),
      recent('dead'),
      {
        firstAttemptAt: iso(now - 11 * MINUTE),
        updatedAt: iso(now - 10 * MINUTE),
        state: 'discarded',
      },
    ]);
    const five = await h.call('GET', '/admin/v1/deliveries/stats');
    expect(five.status).toBe(200);
    expect(five.body.counts).toEqual({ delivered: 2, retrying: 1, dead: 3, discarded: 0 });
    expect(Math.abs(Date.parse(five.body.since) - (now - 5 * MINUTE))).toBeLessThan(5_000);
    const fifteen = await h.call('GET', '/admin/v1/deliveries/stats?minutes=15');
    expect(fifteen.body.counts).toEqual({ delivered: 2, retrying: 1, dead: 3, discarded: 1 });
  });
});

it('describes every route in its OpenAPI document', async () => {
  const doc = await h.call('GET', '/admin/v1/openapi.json', undefined, null);
  const paths = doc.body.paths as Record<
    string,
    Record<string, { parameters?: { name: string }[] }>
  >;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(operations).toEqual(
    expect.arrayContaining([
      'GET /admin/v1/deliveries',
      'GET /admin/v1/deliveries/stats',
      'GET /admin/v1/deliveries/{id}',
      'POST /admin/v1/deliveries/{id}/replay',
      'POST /admin/v1/sources/{sourceId}/destination/replay',
      'GET /admin/v1/replays/{id}',
    ]),
  );
  const query = paths['/admin/v1/deliveries'].get.parameters!.map((p) => p.name);
  expect(query.sort()).toEqual([
    'anonymousId',
    'cursor',
    'destinationId',
    'event',
    'from',
    'limit',
    'messageId',
    'outcome',
    'reason',
    'sourceId',
    'status',
    'to',
    'type',
    'user',
    'userId',
    'webhookUrl',
  ]);
});
