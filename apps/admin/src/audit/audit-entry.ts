import { AdminIdentity } from '../auth/admin-token.guard';
import { isChange } from '../auth/admin-tokens';

/** One change as the audit log records it: who, what and which thing; never a body. */
export interface AuditEntry {
  readonly tokenName: string;
  readonly method: string;
  /** The route as declared, e.g. `/admin/v1/sources/:sourceId`. */
  readonly route: string;
  /** The path asked, without its query. */
  readonly path: string;
  /** The id of the thing changed or made, when the change has one. */
  readonly resourceId: string | null;
}

/** What the audit log needs of an answered request. */
export interface AnsweredRequest {
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly params: Readonly<Record<string, string>>;
  readonly token: AdminIdentity | undefined;
  /** The handler's answer: only a string `id` in it is read. */
  readonly answer: unknown;
}

/** Longest path or id kept: ids are UUIDs, paths a few of them. */
const MAX_TEXT = 500;

/**
 * The entry a successful request leaves, or null when it changed nothing (a read) or came
 * without a token (no route the guard let through). The id is the one of the thing made (the
 * answer's `id`) or else the last id in the path.
 */
export function auditEntry(request: AnsweredRequest): AuditEntry | null {
  if (!request.token || !isChange(request.method)) return null;
  const path = request.url.split('?')[0];
  const made = (request.answer as { id?: unknown } | null | undefined)?.id;
  const lastParam = Object.values(request.params).at(-1);
  const resourceId = typeof made === 'string' ? made : (lastParam ?? null);
  return {
    tokenName: request.token.name,
    method: request.method.toUpperCase(),
    route: (request.route ?? path).slice(0, MAX_TEXT),
    path: path.slice(0, MAX_TEXT),
    resourceId: resourceId === null ? null : resourceId.slice(0, MAX_TEXT),
  };
}
