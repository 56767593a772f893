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

/** The stored setting of a source's destinations, straight from PostgreSQL. */
async function stored(sourceId: string): Promise<boolean[]> {
  const rows: { send: boolean }[] = await h.sql(
    `SELECT send_traceparent AS send FROM destination WHERE source_id = $1 ORDER BY created_at`,
    [sourceId],
  );
  return rows.map((row) => row.send);
}

describe("a destination's sendTraceparent", () => {
  it('is off by default, set on create, returned by GET and changed by PATCH', async () => {
    const id = await newSource();
    const first = await h.call('POST', `${S}/${id}/destinations`, { name: 'CRM' });
    expect(first).toMatchObject({ status: 201, body: { sendTraceparent: false } });
    const second = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'Traced',
      sendTraceparent: true,
    });
    expect(second).toMatchObject({ status: 201, body: { sendTraceparent: true } });
    const path = `${S}/${id}/destinations/${first.body.id}`;
    await expect(h.call('PATCH', path, { sendTraceparent: true })).resolves.toMatchObject({
      status: 200,
      body: { sendTraceparent: true },
    });
    // A PATCH that leaves the field out leaves it alone.
    await expect(h.call('PATCH', path, { name: 'CRM team' })).resolves.toMatchObject({
      body: { sendTraceparent: true },
    });
    await expect(h.call('GET', path)).resolves.toMatchObject({ body: { sendTraceparent: true } });
    await expect(stored(id)).resolves.toEqual([true, true]);
  });

  it.each<[string, unknown]>([
    ['a string', 'yes'],
    ['a number', 1],
    ['null', null],
  ])('refuses %s with a 400 naming the field, saving nothing', async (_what, bad) => {
    const id = await newSource();
    const created = await h.call('POST', `${S}/${id}/destinations`, {
      name: 'CRM',
      sendTraceparent: bad,
    });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ code: 'invalid_request' });
    expect(created.body.message).toContain('sendTraceparent');
    await expect(stored(id)).resolves.toEqual([]);
  });
});
