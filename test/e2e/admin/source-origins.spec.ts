import { AdminHarness } from '../../helpers/admin-harness';

const h = new AdminHarness();
const S = '/admin/v1/sources';

beforeAll(() => h.start());
afterAll(() => h.close());

/** The stored allow-list of a source. */
async function stored(id: string): Promise<string[]> {
  const [row] = await h.sql<{ origins: string[] }>(
    'SELECT allowed_origins AS origins FROM source WHERE id = $1',
    [id],
  );
  return row.origins;
}

describe("a source's browser origin allow-list", () => {
  it('is empty by default, set at creation, replaced by PATCH and cleared by []', async () => {
    const open = await h.call('POST', S, { name: 'web' });
    expect(open.body.allowedOrigins).toEqual([]);
    const origins = ['https://shop.example.com', 'http://127.0.0.1:3000'];
    const created = await h.call('POST', S, { name: 'shop', allowedOrigins: origins });
    expect(created.status).toBe(201);
    expect(created.body.allowedOrigins).toEqual(origins);
    const id = created.body.id as string;
    await expect(stored(id)).resolves.toEqual(origins);
    // A PATCH without the field leaves the list alone.
    await h.call('PATCH', `${S}/${id}`, { name: 'Shop' });
    await expect(stored(id)).resolves.toEqual(origins);
    const patched = await h.call('PATCH', `${S}/${id}`, {
      allowedOrigins: ['https://www.example.com'],
    });
    expect(patched.body.allowedOrigins).toEqual(['https://www.example.com']);
    expect((await h.call('GET', `${S}/${id}`)).body.allowedOrigins).toEqual([
      'https://www.example.com',
    ]);
    await h.call('PATCH', `${S}/${id}`, { allowedOrigins: [] });
    await expect(stored(id)).resolves.toEqual([]);
  });

  it.each([
    ['a path', ['https://shop.example.com/']],
    ['upper case', ['https://Shop.example.com']],
    ['a wildcard', ['https://*.example.com']],
    ['a duplicate', ['https://a.example.com', 'https://a.example.com']],
    ['not a list', 'https://a.example.com'],
    ['51 origins', Array.from({ length: 51 }, (_, i) => `https://s${i}.example.com`)],
  ])('refuses %s, naming the field and the rule, and stores nothing', async (_what, list) => {
    const created = await h.call('POST', S, { name: 'web' });
    const answer = await h.call('PATCH', `${S}/${created.body.id}`, { allowedOrigins: list });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('allowedOrigins') as string,
    });
    await expect(stored(created.body.id as string)).resolves.toEqual([]);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await h.call('GET', '/admin/v1/openapi.json', undefined, null);
    const schema = doc.body.components.schemas.UpdateSourceDto.properties.allowedOrigins;
    expect(schema).toMatchObject({ type: 'array', items: { type: 'string' }, maxItems: 50 });
    expect(doc.body.components.schemas.CreateSourceDto.properties.allowedOrigins).toBeDefined();
  });

  it('gives the admin API itself no CORS: a preflight gets no Access-Control header', async () => {
    const res = await fetch(`${h.url}${S}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual(
      [],
    );
    const get = await fetch(`${h.url}${S}`, { headers: { origin: 'https://shop.example.com' } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});
