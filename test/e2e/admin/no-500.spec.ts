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
