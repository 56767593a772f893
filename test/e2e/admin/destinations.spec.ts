import { randomUUID } from 'node:crypto';

import { MAX_DESTINATIONS_PER_SOURCE, MAX_FILTER_DEPTH } from '@app/contracts';

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

/** Creates a destination through `/destinations`, failing unless it is created. */
async function create(sourceId: string, body: Record<string, unknown>): Promise<any> {
  const answer = await h.call('POST', `${S}/${sourceId}/destinations`, body);
  expect(answer.status).toBe(201);
  return answer.body;
}

/** The stored destinations of a source, straight from PostgreSQL. */
function stored(sourceId: string): Promise<{ name: string; filter: unknown }[]> {
  return h.sql('SELECT name, filter FROM destination WHERE source_id = $1 ORDER BY created_at', [
    sourceId,
  ]);
}

/** `{not: {not: ... a clause}}` with `levels` levels in all. */
function nested(levels: number): unknown {
  let predicate: unknown = { field: 'properties.total', op: 'gt', value: 1 };
  for (let level = 1; level < levels; level += 1) predicate = { not: predicate };
  return predicate;
}

describe('the destinations of a source', () => {
  it('lists, creates, gets, patches and deletes destinations by id, oldest first', async () => {
    const id = await newSource();
    const a = await create(id, { name: 'CRM', filter: { types: ['identify'] } });
    const b = await create(id, { name: 'Data' });
    expect(a).toMatchObject({ name: 'CRM', enabled: false, filter: { types: ['identify'] } });
    expect(b.filter).toBeNull();
    const list = await h.call('GET', `${S}/${id}/destinations`);
    expect((list.body as { id: string }[]).map((d) => d.id)).toEqual([a.id, b.id]);

    const path = `${S}/${id}/destinations/${b.id}`;
    const filter = { events: ['Order Completed'], where: { field: 'userId', op: 'exists' } };
    const patched = await h.call('PATCH', path, { filter });
    expect(patched).toMatchObject({ status: 200, body: { name: 'Data', filter } });
    expect((await h.call('PATCH', path, { filter: null })).body.filter).toBeNull();
    expect(
      (await h.call('POST', `${path}/webhooks`, { url: 'https://example.com/a' })).status,
    ).toBe(201);
    expect((await h.call('POST', `${path}/enable`)).body.enabled).toBe(true);
    expect((await h.call('GET', path)).body).toMatchObject({ id: b.id, enabled: true });
    expect((await h.call('DELETE', path)).status).toBe(204);
    expect((await h.call('GET', path)).body.code).toBe('destination_not_found');
  });

  it('answers 404 for a destination of another source, or no destination at all', async () => {
    const one = await newSource();
    const other = await newSource();
    const d = await create(one, { name: 'CRM' });
    expect((await h.call('GET', `${S}/${other}/destinations/${d.id}`)).body.code).toBe(
      'destination_not_found',
    );
    expect((await h.call('GET', `${S}/${one}/destinations/not-a-uuid`)).status).toBe(404);
  });

  it('keeps the older /destination routes on the first (oldest) destination', async () => {
    const id = await newSource();
    const first = await h.call('POST', `${S}/${id}/destination`, { name: 'First' });
    expect(first.status).toBe(201);
    const second = await create(id, { name: 'Second' });
    const refused = await h.call('POST', `${S}/${id}/destination`, { name: 'Third' });
    expect(refused).toMatchObject({ status: 409, body: { code: 'destination_exists' } });
    expect((await h.call('GET', `${S}/${id}/destination`)).body.id).toBe(first.body.id);
    await h.call('PATCH', `${S}/${id}/destination`, { name: 'Renamed' });
    expect((await h.call('GET', `${S}/${id}/destinations/${first.body.id}`)).body.name).toBe(
      'Renamed',
    );
    expect((await h.call('GET', `${S}/${id}/destinations/${second.id}`)).body.name).toBe('Second');
    expect((await h.call('DELETE', `${S}/${id}/destination`)).status).toBe(204);
    expect((await h.call('GET', `${S}/${id}/destination`)).body.id).toBe(second.id);
  });
});

describe("a destination's bulk replay", () => {
  it('is started for the destination named in the path, or the first one', async () => {
    const id = await newSource();
    const first = await create(id, { name: 'First' });
    const second = await create(id, { name: 'Second' });
    await h.call('POST', `${S}/${id}/destinations/${second.id}/webhooks`, {
      url: 'https://example.com/a',
    });
    await h.call('POST', `${S}/${id}/destinations/${second.id}/enable`);
    const range = {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date().toISOString(),
    };
    const started = await h.call('POST', `${S}/${id}/destinations/${second.id}/replay`, range);
    expect(started).toMatchObject({ status: 202, body: { destinationId: second.id } });
    // The first destination is disabled: the older route acts on it, and says so.
    const older = await h.call('POST', `${S}/${id}/destination/replay`, range);
    expect(older).toMatchObject({ status: 409, body: { code: 'destination_disabled' } });
    expect(first.enabled).toBe(false);
    const unknown = await h.call('POST', `${S}/${id}/destinations/${randomUUID()}/replay`, range);
    expect(unknown).toMatchObject({ status: 404, body: { code: 'destination_not_found' } });
  });
});

describe('refused input stores nothing', () => {
  it.each([
    [
      'an unknown operator',
      {
        where: {
          and: [
            { field: 'a', op: 'eq', value: 1 },
            { field: 'b', op: '$gte', value: 1 },
          ],
        },
      },
      'filter.where.and[1].op',
      'unknown_operator',
    ],
    [
      'a value of the wrong type',
      { where: { field: 'properties.total', op: 'gte', value: { n: 1 } } },
      'filter.where.value',
      'wrong_value_type',
    ],
    ['an unknown call type', { types: ['click'] }, 'filter.types[0]', 'unknown_call_type'],
    [
      'nesting beyond the limit',
      { where: nested(MAX_FILTER_DEPTH + 1) },
      `filter.where${'.not'.repeat(MAX_FILTER_DEPTH)}`,
      'too_deep',
    ],
  ])('a filter with %s is a 400 naming its path', async (_name, filter, path, rule) => {
    const id = await newSource();
    const created = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM', filter });
    expect(created).toMatchObject({ status: 400, body: { code: 'invalid_filter', path, rule } });
    expect(created.body.message).toContain(path);
    await expect(stored(id)).resolves.toEqual([]);

    const d = await create(id, { name: 'Data', filter: { types: ['track'] } });
    const patched = await h.call('PATCH', `${S}/${id}/destinations/${d.id}`, {
      name: 'New',
      filter,
    });
    expect(patched).toMatchObject({ status: 400, body: { code: 'invalid_filter', path, rule } });
    await expect(stored(id)).resolves.toEqual([{ name: 'Data', filter: { types: ['track'] } }]);
  });

  it('a filter that is not an object is a 400', async () => {
    const id = await newSource();
    const answer = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM', filter: [1] });
    expect(answer).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    await expect(stored(id)).resolves.toEqual([]);
  });

  it('a duplicate name is a 409, on create and on rename', async () => {
    const id = await newSource();
    await create(id, { name: 'CRM' });
    const data = await create(id, { name: 'Data' });
    const dup = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM' });
    expect(dup).toMatchObject({ status: 409, body: { code: 'destination_name_taken' } });
    const renamed = await h.call('PATCH', `${S}/${id}/destinations/${data.id}`, {
      name: 'CRM',
      filter: { types: ['page'] },
    });
    expect(renamed).toMatchObject({ status: 409, body: { code: 'destination_name_taken' } });
    await expect(stored(id)).resolves.toEqual([
      { name: 'CRM', filter: null },
      { name: 'Data', filter: null },
    ]);
    // Names are case-sensitive, as integrations keys are.
    expect((await h.call('POST', `${S}/${id}/destinations`, { name: 'crm' })).status).toBe(201);
  });

  it(`a destination past ${MAX_DESTINATIONS_PER_SOURCE} is a 409, even from concurrent requests`, async () => {
    const id = await newSource();
    for (let i = 0; i < MAX_DESTINATIONS_PER_SOURCE - 3; i += 1)
      await create(id, { name: `D${i}` });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h.call('POST', `${S}/${id}/destinations`, { name: `C${i}` }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(5);
    for (const a of refused) {
      expect(a).toMatchObject({ status: 409, body: { code: 'too_many_destinations' } });
    }
    await expect(stored(id)).resolves.toHaveLength(MAX_DESTINATIONS_PER_SOURCE);
    const list = await h.call('GET', `${S}/${id}/destinations`);
    expect(list.body).toHaveLength(MAX_DESTINATIONS_PER_SOURCE);
  });
});

it('documents the destinations routes in its OpenAPI document', async () => {
  const doc = await h.call('GET', '/admin/v1/openapi.json', undefined, null);
  expect(Object.keys(doc.body.paths)).toEqual(
    expect.arrayContaining([
      '/admin/v1/sources/{sourceId}/destinations',
      '/admin/v1/sources/{sourceId}/destinations/{destinationId}',
      '/admin/v1/sources/{sourceId}/destinations/{destinationId}/webhooks',
      '/admin/v1/sources/{sourceId}/destination',
    ]),
  );
  expect(doc.body.paths['/admin/v1/sources/{sourceId}/destination'].get.description).toMatch(
    /FIRST destination/,
  );
  expect(doc.body.components.schemas.CreateDestinationDto.properties.filter).toBeDefined();
});
