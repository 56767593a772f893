import { AdminHarness } from '../../helpers/admin-harness';
import { TEST_ADMIN_TOKEN } from '../../helpers/services';

const READER = 'reader-token-for-the-audit-spec-0001';
const WRITER = 'writer-token-for-the-audit-spec-0002';
const S = '/admin/v1/sources';

const h = new AdminHarness();

beforeAll(() =>
  h.start({ ADMIN_NAMED_TOKENS: `support:read:${READER},deploy-bot:full:${WRITER}` }),
);
afterAll(() => h.close());

/** An entry of `GET /admin/v1/audit`. */
interface AuditItem {
  readonly id: string;
  readonly at: string;
  readonly tokenName: string;
}

async function audit(): Promise<AuditItem[]> {
  const answer = await h.call('GET', '/admin/v1/audit?limit=500');
  expect(answer.status).toBe(200);
  return (answer.body as { items: AuditItem[] }).items;
}

describe('admin tokens with names and scopes, and the audit log', () => {
  it('a read-only token reads, and every change is refused with 403 token_read_only and audited nothing', async () => {
    const source = await h.call('POST', S, { name: 'scoped' }, WRITER);
    const path = `${S}/${source.body.id as string}`;
    const before = await audit();

    await expect(h.call('GET', path, undefined, READER)).resolves.toMatchObject({ status: 200 });
    await expect(h.call('GET', '/admin/v1/audit', undefined, READER)).resolves.toMatchObject({
      status: 200,
    });
    for (const [method, target, body] of [
      ['POST', S, { name: 'nope' }],
      ['PATCH', path, { name: 'renamed' }],
      ['POST', `${path}/write-key`, undefined],
      ['DELETE', path, undefined],
      ['POST', `${path}/destinations`, { name: 'hooks' }],
    ] as const) {
      const answer = await h.call(method, target, body, READER);
      expect({ method, target, status: answer.status, code: answer.body?.code }).toEqual({
        method,
        target,
        status: 403,
        code: 'token_read_only',
      });
    }
    await expect(h.call('GET', path)).resolves.toMatchObject({ body: { name: 'scoped' } });
    await expect(h.call('GET', S)).resolves.toMatchObject({ body: [{ name: 'scoped' }] });
    await expect(audit()).resolves.toEqual(before);
  });

  it('records each change with the name of its token, the route, the path and the id, never a body', async () => {
    const created = await h.call('POST', S, { name: 'audited' }, WRITER);
    const id = created.body.id as string;
    const rotated = await h.call('POST', `${S}/${id}/write-key?reason=test`, undefined);
    expect(rotated.status).toBe(200);
    await expect(h.call('PATCH', `${S}/${id}`, { name: '' }, WRITER)).resolves.toMatchObject({
      status: 400,
    });

    const entries = await audit();
    expect(entries.slice(0, 2)).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        at: expect.any(String),
        tokenName: 'default',
        method: 'POST',
        route: '/admin/v1/sources/:sourceId/write-key',
        path: `${S}/${id}/write-key`,
        resourceId: id,
      },
      expect.objectContaining({
        tokenName: 'deploy-bot',
        method: 'POST',
        route: S,
        path: S,
        resourceId: id,
      }),
    ]);
    expect(Date.now() - Date.parse(entries[0].at)).toBeLessThan(60_000);
    const stored = JSON.stringify(await h.sql('SELECT * FROM admin_audit'));
    expect(stored).not.toContain(created.body.writeKey);
    expect(stored).not.toContain(rotated.body.writeKey);
    expect(stored).not.toContain(TEST_ADMIN_TOKEN);
    expect(stored).not.toContain(WRITER);
  });

  it('pages newest first with nextCursor, and refuses a cursor it did not give', async () => {
    for (const name of ['p1', 'p2', 'p3']) await h.call('POST', S, { name });
    const all = await audit();
    const first = await h.call('GET', '/admin/v1/audit?limit=2');
    expect(first.body.items).toEqual(all.slice(0, 2));
    const second = await h.call('GET', `/admin/v1/audit?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items).toEqual(all.slice(2, 4));
    for (const query of ['cursor=abc', 'cursor=-1', 'limit=0', 'limit=501']) {
      await expect(h.call('GET', `/admin/v1/audit?${query}`)).resolves.toMatchObject({
        status: 400,
        body: { code: 'invalid_request' },
      });
    }
  });
  it('a change whose entry PostgreSQL refuses stands, is answered, and is logged without secrets', async () => {
    // A real refusal by the database, for every new row of the table.
    await h.sql(
      'ALTER TABLE admin_audit ADD CONSTRAINT refuse_every_entry CHECK (false) NOT VALID',
    );
    const written: string[] = [];
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const before = await audit();
      const created = await h.call('POST', S, { name: 'unaudited' }, WRITER);
      expect(created.status).toBe(201);
      await expect(h.call('GET', `${S}/${created.body.id as string}`)).resolves.toMatchObject({
        body: { name: 'unaudited' },
      });
      await expect(audit()).resolves.toEqual(before);
      const lines = written.filter((line) => line.includes('audit entry of'));
      expect(lines).toEqual([
        expect.stringContaining(
          'audit entry of POST /admin/v1/sources by token \\"deploy-bot\\" not stored',
        ),
      ]);
      expect(lines[0]).toContain('refuse_every_entry');
      expect(lines[0]).not.toContain(created.body.writeKey);
      expect(lines[0]).not.toContain(WRITER);
    } finally {
      stderr.mockRestore();
      await h.sql('ALTER TABLE admin_audit DROP CONSTRAINT refuse_every_entry');
    }
  });
});
