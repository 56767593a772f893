import { loadAdminConfig } from '../config';
import { adminTokens, decideAccess, namedTokenProblems, parseNamedTokens } from './admin-tokens';

const T1 = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const T2 = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const T3 = 'cccccccccccccccccccccccccccccc';
const ENV = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  ADMIN_TOKENS: T1,
  SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
};

describe('admin tokens', () => {
  it("names ADMIN_TOKENS' tokens default (full), then the named ones", () => {
    expect(adminTokens([T1], parseNamedTokens(`grafana:read:${T2},ci.bot-2:full:${T3}`))).toEqual([
      { name: 'default', scope: 'full', token: T1 },
      { name: 'grafana', scope: 'read', token: T2 },
      { name: 'ci.bot-2', scope: 'full', token: T3 },
    ]);
    expect(parseNamedTokens('')).toEqual([]);
  });

  it.each<[string, string[]]>([
    [`a:read:${T2},b:full:${T3}`, []],
    [`default:read:${T2}`, ['ADMIN_NAMED_TOKENS: the name "default" is ADMIN_TOKENS\' name']],
    [`a:read:${T2},a:full:${T3}`, ['ADMIN_NAMED_TOKENS: names used twice: a']],
    [`a:read:${T1}`, ['ADMIN_TOKENS, ADMIN_NAMED_TOKENS: a token is listed twice']],
  ])('%s: %j', (named, problems) => {
    expect(namedTokenProblems(parseNamedTokens(named), [T1])).toEqual(problems);
  });

  it.each([
    ['read', 'GET', 'allow'],
    ['read', 'HEAD', 'allow'],
    ['read', 'POST', 'read_only'],
    ['read', 'patch', 'read_only'],
    ['read', 'DELETE', 'read_only'],
    ['full', 'DELETE', 'allow'],
  ] as const)('a %s token asking %s: %s', (scope, method, kind) => {
    expect(decideAccess(scope, method)).toEqual({ kind });
  });

  it('loads ADMIN_NAMED_TOKENS, and refuses a malformed one naming the variable, never its value', () => {
    const config = loadAdminConfig({ ...ENV, ADMIN_NAMED_TOKENS: `grafana:read:${T2}` });
    expect(config.admin.tokens).toEqual([T1]);
    expect(config.admin.namedTokens).toEqual([{ name: 'grafana', scope: 'read', token: T2 }]);
    for (const bad of [`grafana:write:${T2}`, `Grafana:read:${T2}`, 'grafana:read:short', T2]) {
      expect(() => loadAdminConfig({ ...ENV, ADMIN_NAMED_TOKENS: bad })).toThrow(
        /ADMIN_NAMED_TOKENS/,
      );
      expect(() => loadAdminConfig({ ...ENV, ADMIN_NAMED_TOKENS: bad })).not.toThrow(T2);
    }
    expect(() => loadAdminConfig({ ...ENV, ADMIN_NAMED_TOKENS: `x:full:${T1}` })).toThrow(
      /listed twice/,
    );
  });
});
