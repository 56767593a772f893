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

/** The stored ordering columns of a source's destinations, straight from PostgreSQL. */
async function stored(sourceId: string): Promise<unknown[]> {
  return h.sql(
    `SELECT ordering_max_pending_calls AS pending, ordering_max_hold_seconds AS hold
     FROM destination WHERE source_id = $1 ORDER BY created_at`,
    [sourceId],
  );
}

const DEFAULTS = { maxPendingCalls: 100, maxHoldSeconds: 600 };

const BAD: [string, unknown, string][] = [
  ['maxPendingCalls 0', { maxPendingCalls: 0 }, 'ordering.maxPendingCalls'],
  ['maxPendingCalls above 1,000', { maxPendingCalls: 1_001 }, 'ordering.maxPendingCalls'],
  ['a fractional maxPendingCalls', { maxPendingCalls: 2.5 }, 'ordering.maxPendingCalls'],
  ['maxHoldSeconds 0', { maxHoldSeconds: 0 }, 'ordering.maxHoldSeconds'],
  ['maxHoldSeconds above an hour', { maxHoldSeconds: 3_601 }, 'ordering.maxHoldSeconds'],
  ['an unknown field', { maxPending: 10 }, 'ordering.maxPending'],
  ['not an object', true, 'ordering'],
];

describe("a destination's ordering", () => {
  it('is off by default, set with defaults, changed and cleared', async () => {
    const id = await newSource();
    const first = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'CRM',
      ordering: { maxHoldSeconds: 60 },
    });
    expect(first).toMatchObject({
      status: 201,
      body: { ordering: { ...DEFAULTS, maxHoldSeconds: 60 } },
    });
    const second = await h.call('POST', `${S}/${id}/destinations`, { name: 'Data' });
    expect(second).toMatchObject({ status: 201, body: { ordering: null } });

    const path = `${S}/${id}/destinations/${second.body.id}`;
    const set = { maxPendingCalls: 5, maxHoldSeconds: 3_600 };
    await expect(h.call('PATCH', path, { ordering: set })).resolves.toMatchObject({
      status: 200,
      body: { ordering: set },
    });
    await expect(h.call('PATCH', path, { name: 'Data team' })).resolves.toMatchObject({
      body: { ordering: set },
    });
    await expect(stored(id)).resolves.toEqual([
      { pending: 100, hold: 60 },
      { pending: 5, hold: 3_600 },
    ]);
    await expect(h.call('PATCH', path, { ordering: null })).resolves.toMatchObject({
      status: 200,
      body: { ordering: null },
    });
    await expect(stored(id)).resolves.toEqual([
      { pending: 100, hold: 60 },
      { pending: null, hold: null },
    ]);
  });

  it.each(BAD)(
    'refuses %s with 400 invalid_request naming the field, saving nothing',
    async (_, bad, field) => {
      const id = await newSource();
      const created = await h.call('POST', `${S}/${id}/destinations`, {
        name: 'CRM',
        ordering: bad,
      });
      expect(created.status).toBe(400);
      expect(created.body.code).toBe('invalid_request');
      expect(created.body.message).toContain(field);
      await expect(stored(id)).resolves.toEqual([]);
      const made = await h.call('POST', `${S}/${id}/destinations`, {
        name: 'CRM',
        ordering: { maxPendingCalls: 10 },
      });
      const patched = await h.call('PATCH', `${S}/${id}/destinations/${made.body.id}`, {
        name: 'Renamed',
        ordering: bad,
      });
      expect(patched.status).toBe(400);
      expect(patched.body.code).toBe('invalid_request');
      await expect(stored(id)).resolves.toEqual([{ pending: 10, hold: 600 }]);
    },
  );

  it('does not combine with batching: 400 ordering_with_batching, nothing stored', async () => {
    const id = await newSource();
    const both = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'CRM',
      ordering: {},
      batching: {},
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('ordering_with_batching');
    await expect(stored(id)).resolves.toEqual([]);

    const batching = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'Batched',
      batching: { maxCalls: 10 },
    });
    const path = `${S}/${id}/destinations/${batching.body.id}`;
    const patched = await h.call('PATCH', path, { name: 'Renamed', ordering: {} });
    expect(patched.status).toBe(400);
    expect(patched.body.code).toBe('ordering_with_batching');
    await expect(h.call('GET', path)).resolves.toMatchObject({
      body: { name: 'Batched', ordering: null, batching: { maxCalls: 10 } },
    });
    // Switching from one to the other in one request is allowed.
    await expect(
      h.call('PATCH', path, { batching: null, ordering: { maxPendingCalls: 7 } }),
    ).resolves.toMatchObject({
      status: 200,
      body: { batching: null, ordering: { ...DEFAULTS, maxPendingCalls: 7 } },
    });
  });

  it('is refused by the database too when out of range, half set or beside batching', async () => {
    const id = await newSource();
    const made = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM' });
    const update = (set: string) =>
      h.sql(`UPDATE destination SET ${set} WHERE id = $1`, [made.body.id]);
    await expect(
      update('ordering_max_pending_calls = 1001, ordering_max_hold_seconds = 60'),
    ).rejects.toThrow(/destination_ordering_check/);
    await expect(update('ordering_max_pending_calls = 10')).rejects.toThrow(
      /destination_ordering_check/,
    );
    await expect(
      update(
        `ordering_max_pending_calls = 10, ordering_max_hold_seconds = 60,
         batch_max_calls = 10, batch_max_bytes = 2048, batch_max_wait_ms = 0`,
      ),
    ).rejects.toThrow(/destination_ordering_check/);
  });
});
