import { AdminHarness } from '../../helpers/admin-harness';

const h = new AdminHarness();
const S = '/admin/v1/sources';

beforeAll(() => h.start());
afterAll(() => h.close());

/** A new source's id. */
async function newSource(): Promise<string> {
  const created = await h.call('POST', S, { name: 'web' });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

/** The stored batching columns of a source's destinations, straight from PostgreSQL. */
async function stored(sourceId: string): Promise<unknown[]> {
  return h.sql(
    `SELECT batch_max_calls AS calls, batch_max_bytes AS bytes, batch_max_wait_ms AS wait
     FROM destination WHERE source_id = $1 ORDER BY created_at`,
    [sourceId],
  );
}

const DEFAULTS = { maxCalls: 100, maxBytes: 1_048_576, maxWaitMs: 1_000 };

const BAD: [string, unknown, string][] = [
  ['maxCalls 0', { maxCalls: 0 }, 'batching.maxCalls'],
  ['maxCalls above 4,000', { maxCalls: 4_001 }, 'batching.maxCalls'],
  ['a fractional maxCalls', { maxCalls: 1.5 }, 'batching.maxCalls'],
  ['maxBytes below 1,024', { maxBytes: 1_000 }, 'batching.maxBytes'],
  ['a negative maxWaitMs', { maxWaitMs: -1 }, 'batching.maxWaitMs'],
  ['maxWaitMs above a minute', { maxWaitMs: 60_001 }, 'batching.maxWaitMs'],
  ['an unknown field', { size: 10 }, 'batching.size'],
  ['not an object', 500, 'batching'],
];

describe("a destination's batching", () => {
  it('is off by default, set with defaults, changed and cleared, on both routes', async () => {
    const id = await newSource();
    const first = await h.call('POST', `${S}/${id}/destination`, {
      name: 'CRM',
      batching: { maxCalls: 4_000 },
    });
    expect(first).toMatchObject({
      status: 201,
      body: { batching: { ...DEFAULTS, maxCalls: 4_000 } },
    });
    const second = await h.call('POST', `${S}/${id}/destinations`, { name: 'Data' });
    expect(second).toMatchObject({ status: 201, body: { batching: null } });

    const path = `${S}/${id}/destinations/${second.body.id}`;
    const set = { maxCalls: 500, maxBytes: 2_048, maxWaitMs: 0 };
    await expect(h.call('PATCH', path, { batching: set })).resolves.toMatchObject({
      status: 200,
      body: { batching: set },
    });
    // A PATCH that leaves the field out leaves batching alone.
    await expect(h.call('PATCH', path, { name: 'Data team' })).resolves.toMatchObject({
      body: { batching: set },
    });
    await expect(
      h.call('PATCH', `${S}/${id}/destination`, { batching: null }),
    ).resolves.toMatchObject({ status: 200, body: { batching: null } });
    await expect(h.call('GET', path)).resolves.toMatchObject({ body: { batching: set } });
    await expect(stored(id)).resolves.toEqual([
      { calls: null, bytes: null, wait: null },
      { calls: 500, bytes: 2_048, wait: 0 },
    ]);
  });

  it.each(BAD)(
    'refuses %s with 400 invalid_request naming the field, saving nothing',
    async (_, bad, field) => {
      const id = await newSource();
      for (const route of ['/destinations', '/destination']) {
        const created = await h.call('POST', `${S}/${id}${route}`, { name: 'CRM', batching: bad });
        expect(created.status).toBe(400);
        expect(created.body.code).toBe('invalid_request');
        expect(created.body.message).toContain(field);
      }
      await expect(stored(id)).resolves.toEqual([]);
      const made = await h.call('POST', `${S}/${id}/destinations`, {
        name: 'CRM',
        batching: { maxCalls: 10 },
      });
      const patched = await h.call('PATCH', `${S}/${id}/destinations/${made.body.id}`, {
        name: 'Renamed',
        batching: bad,
      });
      expect(patched.status).toBe(400);
      expect(patched.body.code).toBe('invalid_request');
      await expect(h.call('GET', `${S}/${id}/destinations/${made.body.id}`)).resolves.toMatchObject(
        {
          body: { name: 'CRM', batching: { ...DEFAULTS, maxCalls: 10 } },
        },
      );
    },
  );

  it('is refused by the database too when out of range or half set', async () => {
    const id = await newSource();
    const made = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM' });
    await expect(
      h.sql(
        'UPDATE destination SET batch_max_calls = 4001, batch_max_bytes = 2048, batch_max_wait_ms = 0 WHERE id = $1',
        [made.body.id],
      ),
    ).rejects.toThrow(/destination_batching_check/);
    await expect(
      h.sql('UPDATE destination SET batch_max_calls = 10 WHERE id = $1', [made.body.id]),
    ).rejects.toThrow(/destination_batching_check/);
  });
});
