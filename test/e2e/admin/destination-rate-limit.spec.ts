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

/** The stored rate limits of a source's destinations, straight from PostgreSQL. */
async function storedLimits(sourceId: string): Promise<(number | null)[]> {
  const rows: { limit: number | null }[] = await h.sql(
    `SELECT rate_limit_per_second AS "limit" FROM destination WHERE source_id = $1
     ORDER BY created_at`,
    [sourceId],
  );
  return rows.map((row) => row.limit);
}

const BAD_LIMITS: [string, unknown][] = [
  ['zero', 0],
  ['negative', -1],
  ['not an integer', 1.5],
  ['a string', 'x'],
  ['above 10,000', 10_001],
];

describe('a destination rate limit', () => {
  it('is set on create, returned by GET, changed and cleared by PATCH, on both routes', async () => {
    const id = await newSource();
    const first = await h.call('POST', `${S}/${id}/destination`, {
      name: 'CRM',
      rateLimitPerSecond: 50,
    });
    expect(first).toMatchObject({ status: 201, body: { rateLimitPerSecond: 50 } });
    const second = await h.call('POST', `${S}/${id}/destinations`, { name: 'Data' });
    expect(second).toMatchObject({ status: 201, body: { rateLimitPerSecond: null } });

    const path = `${S}/${id}/destinations/${second.body.id}`;
    await expect(h.call('PATCH', path, { rateLimitPerSecond: 10_000 })).resolves.toMatchObject({
      status: 200,
      body: { rateLimitPerSecond: 10_000 },
    });
    await expect(h.call('GET', path)).resolves.toMatchObject({
      body: { rateLimitPerSecond: 10_000 },
    });
    // A PATCH that leaves the field out leaves the limit alone.
    await expect(h.call('PATCH', path, { name: 'Data team' })).resolves.toMatchObject({
      body: { rateLimitPerSecond: 10_000 },
    });
    await expect(
      h.call('PATCH', `${S}/${id}/destination`, { rateLimitPerSecond: 1 }),
    ).resolves.toMatchObject({ status: 200, body: { rateLimitPerSecond: 1 } });
    await expect(h.call('PATCH', path, { rateLimitPerSecond: null })).resolves.toMatchObject({
      body: { rateLimitPerSecond: null },
    });
    await expect(h.call('GET', `${S}/${id}/destination`)).resolves.toMatchObject({
      body: { rateLimitPerSecond: 1 },
    });
    await expect(storedLimits(id)).resolves.toEqual([1, null]);
  });

  it.each(BAD_LIMITS)('refuses %s with a 400 naming the field, saving nothing', async (_, bad) => {
    const id = await newSource();
    for (const route of ['/destinations', '/destination']) {
      const created = await h.call('POST', `${S}/${id}${route}`, {
        name: 'CRM',
        rateLimitPerSecond: bad,
      });
      expect(created.status).toBe(400);
      expect(created.body.code).toBe('invalid_request');
      expect(created.body.message).toContain('rateLimitPerSecond');
    }
    await expect(storedLimits(id)).resolves.toEqual([]);

    const made = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'CRM',
      rateLimitPerSecond: 20,
    });
    for (const path of [`/destinations/${made.body.id}`, '/destination']) {
      const patched = await h.call('PATCH', `${S}/${id}${path}`, {
        name: 'Renamed',
        rateLimitPerSecond: bad,
      });
      expect(patched.status).toBe(400);
      expect(patched.body.code).toBe('invalid_request');
      expect(patched.body.message).toContain('rateLimitPerSecond');
    }
    // Neither the limit nor the name given beside it was saved.
    await expect(h.call('GET', `${S}/${id}/destinations/${made.body.id}`)).resolves.toMatchObject({
      body: { name: 'CRM', rateLimitPerSecond: 20 },
    });
    await expect(storedLimits(id)).resolves.toEqual([20]);
  });

  it('is refused by the database too when out of range', async () => {
    const id = await newSource();
    const made = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM' });
    await expect(
      h.sql('UPDATE destination SET rate_limit_per_second = 0 WHERE id = $1', [made.body.id]),
    ).rejects.toThrow(/destination_rate_limit_range_check/);
  });
});
