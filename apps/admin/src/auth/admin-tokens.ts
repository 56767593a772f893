/** What a token may do: `read` answers GET only; `full` may change settings too. */
export type AdminTokenScope = 'read' | 'full';

/** An accepted admin token: its name (shown in the audit log, never the token) and scope. */
export interface AdminToken {
  readonly name: string;
  readonly scope: AdminTokenScope;
  readonly token: string;
}

/** The name of every token listed in `ADMIN_TOKENS` (full tokens, as before named tokens). */
export const DEFAULT_TOKEN_NAME = 'default';

/** One entry of `ADMIN_NAMED_TOKENS`: `name:scope:token`. */
export const NAMED_TOKEN_PATTERN =
  /^([a-z0-9][a-z0-9_.-]{0,63}):(read|full):([A-Za-z0-9._~+/=-]{24,})$/;

/** Methods that change nothing; every other one is a change a read-only token cannot make. */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The entries of `ADMIN_NAMED_TOKENS` (`name:scope:token`, comma-separated, each checked). */
export function parseNamedTokens(text: string): AdminToken[] {
  if (text === '') return [];
  return text.split(',').map((entry) => {
    const [, name, scope, token] = NAMED_TOKEN_PATTERN.exec(entry) ?? [];
    return { name, scope: scope as AdminTokenScope, token };
  });
}

/** The accepted tokens: `ADMIN_TOKENS`' entries as full tokens named `default`, then `named`. */
export function adminTokens(
  fullTokens: readonly string[],
  named: readonly AdminToken[],
): AdminToken[] {
  const defaults = fullTokens.map((token) => ({
    name: DEFAULT_TOKEN_NAME,
    scope: 'full' as const,
    token,
  }));
  return [...defaults, ...named];
}

/** What start-up refuses in a token list: a name used twice or `default`, a token used twice. */
export function namedTokenProblems(
  named: readonly AdminToken[],
  fullTokens: readonly string[],
): string[] {
  const problems: string[] = [];
  const names = named.map((t) => t.name);
  if (names.includes(DEFAULT_TOKEN_NAME)) {
    problems.push(`ADMIN_NAMED_TOKENS: the name "${DEFAULT_TOKEN_NAME}" is ADMIN_TOKENS' name`);
  }
  const twice = names.filter((name, i) => names.indexOf(name) !== i);
  if (twice.length > 0) problems.push(`ADMIN_NAMED_TOKENS: names used twice: ${twice.join(', ')}`);
  const values = [...fullTokens, ...named.map((t) => t.token)];
  if (new Set(values).size !== values.length) {
    problems.push('ADMIN_TOKENS, ADMIN_NAMED_TOKENS: a token is listed twice');
  }
  return problems;
}

/** Whether a request with `method` is a change (audited; refused to a read-only token). */
export function isChange(method: string): boolean {
  return !READ_METHODS.has(method.toUpperCase());
}

/** What a recognised token may do with a request of `method`. */
export type AccessDecision = { kind: 'allow' } | { kind: 'read_only' };

export function decideAccess(scope: AdminTokenScope, method: string): AccessDecision {
  return scope === 'read' && isChange(method) ? { kind: 'read_only' } : { kind: 'allow' };
}
