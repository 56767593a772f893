import { SecretBox } from '@app/signing';

import { AdminHarness } from '../../helpers/admin-harness';
import { TEST_SECRETS_KEY } from '../../helpers/services';

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

/** A source with a destination and `n` webhooks. */
async function withWebhooks(n: number): Promise<{ id: string; dest: string }> {
  const id = await newSource();
  const dest = `${S}/${id}/destination`;
  expect((await h.call('POST', dest, { name: 'hooks' })).status).toBe(201);
  for (let i = 0; i < n; i += 1) {
    expect(
      (await h.call('POST', `${dest}/webhooks`, { url: `https://example.com/h${i}` })).status,
    ).toBe(201);
  }
  return { id, dest };
}

describe('authentication', () => {
  it('answers 401 without a token and 403 with a wrong one', async () => {
    expect(await h.call('GET', S, undefined, null)).toMatchObject({
      status: 401,
      body: { code: 'unauthorized' },
    });
    expect(await h.call('GET', S, undefined, 'wrong-token-wrong-token-wrong')).toMatchObject({
      status: 403,
      body: { code: 'forbidden' },
    });
  });

  it('accepts every configured token, and leaves health and metrics open', async () => {
    expect((await h.call('GET', S, undefined, 'other-token-that-is-long-enough-123')).status).toBe(
      200,
    );
    expect((await h.call('GET', '/health/ready', undefined, null)).status).toBe(200);
    expect((await h.call('GET', '/metrics', undefined, null)).text).toContain(
      'sluice_admin_requests_total',
    );
  });
});

describe('sources', () => {
  it('creates a source with a write key shown once, and manages it', async () => {
    const created = await h.call('POST', S, { name: 'Website' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Website', enabled: true });
    expect(created.body.writeKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = created.body.id as string;
    const got = await h.call('GET', `${S}/${id}`);
    expect(got.body).toEqual({
      id,
      name: 'Website',
      enabled: true,
      allowedOrigins: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await h.call('GET', S)).body).toEqual(expect.arrayContaining([got.body]));
    const patched = await h.call('PATCH', `${S}/${id}`, { name: 'Site', enabled: false });
    expect(patched.body).toMatchObject({ name: 'Site', enabled: false });
    const rotated = await h.call('POST', `${S}/${id}/write-key`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.writeKey).not.toBe(created.body.writeKey);
    const [row] = await h.sql<{ write_key: string }>('SELECT write_key FROM source WHERE id = $1', [
      id,
    ]);
    expect(row.write_key).toBe(rotated.body.writeKey);
    expect((await h.call('DELETE', `${S}/${id}`)).status).toBe(204);
    expect((await h.call('GET', `${S}/${id}`)).body.code).toBe('source_not_found');
  });

  it('shows usage counted by ingest per day', async () => {
    const id = await newSource();
    await h.sql(
      `INSERT INTO source_usage (source_id, day, calls) VALUES ($1, '2026-11-20', 7), ($1, '2026-11-21', 3)`,
      [id],
    );
    const usage = await h.call('GET', `${S}/${id}/usage?from=2026-11-01&to=2026-11-21`);
    expect(usage.body).toEqual({
      sourceId: id,
      days: [
        { day: '2026-11-20', calls: 7 },
        { day: '2026-11-21', calls: 3 },
      ],
    });
  });
});

describe('the webhook destination', () => {
  it('is created disabled, enabled only with a webhook, and at most once per source', async () => {
    const id = await newSource();
    const dest = `${S}/${id}/destination`;
    const created = await h.call('POST', dest, { name: 'My hooks' });
    expect(created.body).toMatchObject({
      kind: 'webhooks',
      name: 'My hooks',
      enabled: false,
      sharedSecretSet: false,
      webhooks: [],
    });
    expect(await h.call('POST', dest, { name: 'again' })).toMatchObject({
      status: 409,
      body: { code: 'destination_exists' },
    });
    expect(await h.call('POST', `${dest}/enable`)).toMatchObject({
      status: 409,
      body: { code: 'no_webhooks' },
    });
    expect((await h.call('GET', dest)).body.enabled).toBe(false);
    await h.call('POST', `${dest}/webhooks`, {
      url: 'http://127.0.0.1:9999/hook',
      headers: { 'X-Team': 'a' },
    });
    expect((await h.call('POST', `${dest}/enable`)).body.enabled).toBe(true);
    expect((await h.call('POST', `${dest}/disable`)).body.enabled).toBe(false);
  });

  it('keeps a webhook id when the entry is edited in place or the list replaced', async () => {
    const { dest } = await withWebhooks(2);
    const [first, second] = (await h.call('GET', dest)).body.webhooks as { id: string }[];
    const edited = await h.call('PATCH', `${dest}/webhooks/${first.id}`, {
      url: 'https://example.com/edited',
    });
    expect(edited.body).toMatchObject({
      id: first.id,
      url: 'https://example.com/edited',
      position: 0,
    });
    const replaced = await h.call('PUT', `${dest}/webhooks`, {
      webhooks: [
        { id: second.id, url: 'https://example.com/second' },
        { url: 'https://example.com/new' },
      ],
    });
    expect(replaced.status).toBe(200);
    const hooks = replaced.body.webhooks as { id: string; position: number; url: string }[];
    expect(hooks.map((w) => [w.position, w.url])).toEqual([
      [0, 'https://example.com/second'],
      [1, 'https://example.com/new'],
    ]);
    expect(hooks[0].id).toBe(second.id);
    expect(hooks.map((w) => w.id)).not.toContain(first.id);
  });

  it('refuses to remove the last webhook of an enabled destination', async () => {
    const { dest } = await withWebhooks(1);
    await h.call('POST', `${dest}/enable`);
    const [only] = (await h.call('GET', dest)).body.webhooks as { id: string }[];
    expect(await h.call('DELETE', `${dest}/webhooks/${only.id}`)).toMatchObject({
      status: 409,
      body: { code: 'last_webhook' },
    });
    expect(await h.call('PUT', `${dest}/webhooks`, { webhooks: [] })).toMatchObject({
      status: 409,
    });
    expect((await h.call('GET', dest)).body.webhooks).toHaveLength(1);
  });

  it('stores the shared secret encrypted and never shows it', async () => {
    const { id, dest } = await withWebhooks(1);
    const secret = 'the-shared-secret-💡';
    const set = await h.call('PUT', `${dest}/shared-secret`, { sharedSecret: secret });
    expect(set.body.sharedSecretSet).toBe(true);
    const answers = [
      set,
      await h.call('GET', dest),
      await h.call('GET', `${S}/${id}`),
      await h.call('GET', S),
    ];
    for (const answer of answers) expect(answer.text).not.toContain('the-shared-secret');
    const [row] = await h.sql<{ c: Buffer }>(
      'SELECT shared_secret_ciphertext AS c FROM destination WHERE source_id = $1',
      [id],
    );
    expect(row.c.toString('latin1')).not.toContain('the-shared-secret');
    expect(new SecretBox(TEST_SECRETS_KEY).open(row.c)).toBe(secret);
    expect((await h.call('DELETE', `${dest}/shared-secret`)).body.sharedSecretSet).toBe(false);
    expect(await h.call('PUT', `${dest}/shared-secret`, { sharedSecret: '' })).toMatchObject({
      status: 400,
    });
  });
});

describe('bad input is refused with a clear 4xx and nothing stored', () => {
  let dest: string;
  let before: string;

  beforeAll(async () => {
    dest = (await withWebhooks(5)).dest;
  });

  beforeEach(async () => {
    before = (await h.call('GET', dest)).text;
  });

  afterEach(async () => {
    expect((await h.call('GET', dest)).text).toBe(before);
  });

  it('a sixth webhook', async () => {
    expect(
      await h.call('POST', `${dest}/webhooks`, { url: 'https://example.com/6' }),
    ).toMatchObject({ status: 409, body: { code: 'too_many_webhooks' } });
    const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://example.com/${i}` }));
    const replaced = await h.call('PUT', `${dest}/webhooks`, { webhooks: six });
    expect(replaced.status).toBe(400);
    expect(replaced.body.message).toMatch(/webhooks: .*arrayMaxSize/);
  });

  it.each([
    [
      'a sixth header',
      { url: 'https://e.com', headers: { a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' } },
      /at most 5/,
    ],
    ['an ftp URL', { url: 'ftp://example.com/x' }, /absolute http or https URL/],
    ['a relative URL', { url: '/hooks/x' }, /absolute http or https URL/],
    [
      'a header value with CR/LF',
      { url: 'https://e.com', headers: { 'X-A': 'a\r\nX-B: b' } },
      /CR, LF/,
    ],
    [
      'X-Signature',
      { url: 'https://e.com', headers: { 'x-signature': 'forged' } },
      /x-signature cannot be set/,
    ],
    [
      'Content-Type',
      { url: 'https://e.com', headers: { 'Content-Type': 'text/plain' } },
      /cannot be set/,
    ],
    [
      'a header name that is not a token',
      { url: 'https://e.com', headers: { 'Bad Name': 'x' } },
      /not a valid token/,
    ],
    ['an unknown field', { url: 'https://e.com', extra: 1 }, /extra/],
  ])('%s', async (_what, body, message) => {
    const hooks = (JSON.parse(before) as { webhooks: { id: string }[] }).webhooks;
    const answer = await h.call('PATCH', `${dest}/webhooks/${hooks[0].id}`, body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.message).toMatch(message);
  });

  it('malformed JSON', async () => {
    const answer = await h.call('PATCH', dest, '{"name": ');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 'bad_request', message: expect.any(String) });
  });

  it('unknown ids', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await h.call('GET', `${S}/${unknown}`)).toMatchObject({
      status: 404,
      body: { code: 'source_not_found' },
    });
    expect(await h.call('GET', `${S}/not-a-uuid/destination`)).toMatchObject({
      status: 404,
      body: { code: 'source_not_found' },
    });
    expect(
      await h.call('PATCH', `${dest}/webhooks/${unknown}`, { url: 'https://e.com' }),
    ).toMatchObject({ status: 404, body: { code: 'webhook_not_found' } });
    const bare = await newSource();
    expect(await h.call('GET', `${S}/${bare}/destination`)).toMatchObject({
      status: 404,
      body: { code: 'destination_not_found' },
    });
  });
});

it('serves its OpenAPI document', async () => {
  const doc = await h.call('GET', '/admin/v1/openapi.json', undefined, null);
  expect(doc.status).toBe(200);
  expect(doc.body.openapi).toMatch(/^3\./);
  expect(Object.keys(doc.body.paths)).toEqual(
    expect.arrayContaining([
      '/admin/v1/sources',
      '/admin/v1/sources/{sourceId}/destination/webhooks',
    ]),
  );
  expect(doc.body.components.schemas.WebhookDto.properties.url).toBeDefined();
});

it('serves its docs page and swagger-ui from its own origin, without a token', async () => {
  const page = await fetch(`${h.url}/admin/docs`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
  const html = await page.text();
  const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
  expect(scripts).toEqual(['/admin/docs/swagger-ui-bundle.js', '/admin/docs/swagger-ui-init.js']);
  expect(html).toContain('href="/admin/docs/swagger-ui.css"');

  const bundle = await fetch(`${h.url}${scripts[0]}`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(await bundle.text()).toContain('SwaggerUIBundle');
  const init = await (await fetch(`${h.url}${scripts[1]}`)).text();
  expect(init).toContain('"/admin/v1/openapi.json"');
  const css = await fetch(`${h.url}/admin/docs/swagger-ui.css`);
  expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
});
