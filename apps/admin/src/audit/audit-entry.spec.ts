import { AnsweredRequest, auditEntry } from './audit-entry';

const FULL = { name: 'deploy-bot', scope: 'full' as const };
const SOURCE = '9b0e5a1e-4c1b-4d0f-9a57-0f3c1f2d8e11';
const DEST = 'f1e2d3c4-b5a6-4978-8123-456789abcdef';

function answered(overrides: Partial<AnsweredRequest>): AnsweredRequest {
  return {
    method: 'PATCH',
    url: `/admin/v1/sources/${SOURCE}`,
    route: '/admin/v1/sources/:sourceId',
    params: { sourceId: SOURCE },
    token: FULL,
    answer: undefined,
    ...overrides,
  };
}

describe(auditEntry.name, () => {
  it.each<[string, Partial<AnsweredRequest>]>([
    ['a read', { method: 'GET' }],
    ['a HEAD', { method: 'HEAD' }],
    ['a request no token was checked for', { token: undefined }],
  ])('records nothing for %s', (_name, overrides) => {
    expect(auditEntry(answered(overrides))).toBeNull();
  });

  it.each<[string, Partial<AnsweredRequest>, string | null]>([
    ['the last id of the path', {}, SOURCE],
    [
      "the made thing's id from the answer",
      {
        method: 'POST',
        url: `/admin/v1/sources/${SOURCE}/destinations`,
        route: '/admin/v1/sources/:sourceId/destinations',
        answer: { id: DEST, name: 'hooks' },
      },
      DEST,
    ],
    [
      'the path id when the answer has no string id',
      {
        method: 'DELETE',
        url: `/admin/v1/sources/${SOURCE}/destinations/${DEST}`,
        params: { sourceId: SOURCE, destinationId: DEST },
        answer: { id: 7 },
      },
      DEST,
    ],
    ['no id', { method: 'POST', url: '/admin/v1/sources', params: {}, answer: undefined }, null],
  ])('records %s', (_name, overrides, resourceId) => {
    expect(auditEntry(answered(overrides))?.resourceId).toBe(resourceId);
  });

  it('records the token name, method, route and path without the query, and nothing of a body', () => {
    const entry = auditEntry(
      answered({
        method: 'post',
        url: `/admin/v1/sources/${SOURCE}/write-key?x=1`,
        route: '/admin/v1/sources/:sourceId/write-key',
        answer: { id: SOURCE, writeKey: 'secret-write-key-value' },
      }),
    );
    expect(entry).toEqual({
      tokenName: 'deploy-bot',
      method: 'POST',
      route: '/admin/v1/sources/:sourceId/write-key',
      path: `/admin/v1/sources/${SOURCE}/write-key`,
      resourceId: SOURCE,
    });
    expect(JSON.stringify(entry)).not.toContain('secret-write-key-value');
  });
});
