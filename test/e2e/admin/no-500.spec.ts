import { randomUUID } from 'node:crypto';

import { AdminHarness } from '../../helpers/admin-harness';

const h = new AdminHarness();
const S = '/admin/v1/sources';

beforeAll(() => h.start());
afterAll(() => h.close());

/** A source with one destination holding one webhook: their paths. */
async function fixture(): Promise<{ source: string; destination: string; webhook: string }> {
  const created = await h.call('POST', S, { name: 'web' });
  const source = `${S}/${created.body.id as string}`;
  const dest = await h.call('POST', `${source}/destinations`, { name: 'hooks' });
  const destination = `${source}/destinations/${dest.body.id as string}`;
  const hook = await h.call('POST', `${destination}/webhooks`, { url: 'https://example.com/h' });
  return { source, destination, webhook: `${destination}/webhooks/${hook.body.id as string}` };
}

describe('admin API: ids that are not UUIDs, and nulls, are client errors', () => {
  it.each([
    ['GET', `${S}/0`],
    ['PATCH', `${S}/0`],
    ['DELETE', `${S}/0`],
    ['GET', `${S}/0/destinations`],
    ['GET', `${S}/0/destination`],
    ['DELETE', `${S}/0/destination`],
    ['GET', `${S}/${randomUUID()}/destinations/0`],
    ['DELETE', `${S}/${randomUUID()}/destinations/0`],
    ['DELETE', `${S}/${randomUUID()}/destinations/${randomUUID()}/webhooks/0`],
  ])('%s %s answers 404 with a code', async (method, path) => {
    const answer = await h.call(method, path, method === 'PATCH' ? { name: 'x' } : undefined);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  it.each([{ name: null }, { enabled: null }, { allowedOrigins: null }])(
    'PATCH a source with %j answers 400 naming the field, and changes nothing',
    async (body) => {
      const { source } = await fixture();
      const before = await h.call('GET', source);
      const answer = await h.call('PATCH', source, body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.message).toContain(Object.keys(body)[0]);
      expect((await h.call('GET', source)).body).toEqual(before.body);
    },
  );

  it.each([{ url: null }, { headers: null }])(
    'PATCH a webhook with %j answers 400 naming the field, and changes nothing',
    async (body) => {
      const { destination, webhook } = await fixture();
      const before = await h.call('GET', destination);
      const answer = await h.call('PATCH', webhook, body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.message).toContain(Object.keys(body)[0]);
      expect((await h.call('GET', destination)).body).toEqual(before.body);
    },
  );

  it.each([{ name: null }, { filter: 'x' }])(
    'PATCH a destination with %j answers 400, and changes nothing',
    async (body) => {
      const { destination } = await fixture();
      const before = await h.call('GET', destination);
      const answer = await h.call('PATCH', destination, body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toEqual(expect.any(String));
      expect((await h.call('GET', destination)).body).toEqual(before.body);
    },
  );
});

describe('admin API: text PostgreSQL cannot store, and days that do not exist, are client errors', () => {
  it.each([
    ['POST', S, '{"name":"a\\u0000b"}'],
    ['POST', S, '{"name":"web","allowedOrigins":["https://a.example\\u0000"]}'],
    ['POST', '/admin/v1/deletion-requests', '{"userIds":["\\u0000"]}'],
    ['GET', '/admin/v1/deliveries?reason=%00', undefined],
  ])('%s %s %s answers 400 invalid_request and stores nothing', async (method, path, body) => {
    const before = await h.call('GET', S);
    const answer = await h.call(method, path, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('U+0000'),
    });
    expect((await h.call('GET', S)).body).toEqual(before.body);
  });

  it('refuses U+0000 in a destination filter or a webhook header, changing nothing', async () => {
    const { source, destination, webhook } = await fixture();
    const before = await h.call('GET', destination);
    for (const [method, path, body] of [
      ['POST', `${source}/destinations`, { name: 'x', filter: { event: 'a\u0000' } }],
      ['PATCH', webhook, { headers: { 'X-Team': 'a\u0000' } }],
      ['PATCH', destination, { name: '\u0000' }],
    ] as const) {
      const answer = await h.call(method, path, body);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
    }
    expect((await h.call('GET', destination)).body).toEqual(before.body);
  });

  it.each(['2026-13-45', '2026-02-30', '0000-00-00', '0001-01-01', '1969-12-31', '2026-1-1'])(
    'GET usage from or to %s answers 400 naming the field',
    async (day) => {
      const { source } = await fixture();
      for (const field of ['from', 'to']) {
        const answer = await h.call('GET', `${source}/usage?${field}=${day}`);
        expect({ field, status: answer.status, code: answer.body.code }).toEqual({
          field,
          status: 400,
          code: 'invalid_request',
        });
        expect(answer.body.message).toContain(field);
      }
    },
  );

  it('GET usage of the first days allowed, and of the last, answers 200', async () => {
    const { source } = await fixture();
    for (const query of ['to=1970-01-05', 'from=9999-12-01&to=9999-12-31', 'from=2024-02-29']) {
      await expect(h.call('GET', `${source}/usage?${query}`)).resolves.toMatchObject({
        status: 200,
        body: { days: [] },
      });
    }
  });
});
