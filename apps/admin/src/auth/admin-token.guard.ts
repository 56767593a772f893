import { createHash, timingSafeEqual } from 'node:crypto';

import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { AdminToken, decideAccess } from './admin-tokens';

/** Injection token of the accepted admin tokens ({@link AdminToken}s). */
export const ADMIN_TOKENS = Symbol('ADMIN_TOKENS');

/** The token a request was let through with: its name and scope, never the token itself. */
export type AdminIdentity = Pick<AdminToken, 'name' | 'scope'>;

/** A request the guard let through carries the identity of its token here. */
export type AdminRequest = FastifyRequest & { adminToken?: AdminIdentity };

/**
 * Guards the admin API with bearer tokens: 401 without one, 403 `forbidden` with a wrong one,
 * 403 `token_read_only` for a change asked with a read-only token. Tokens are compared as
 * SHA-256 digests in constant time, so neither content nor length leaks.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly known: readonly { digest: Buffer; identity: AdminIdentity }[];

  constructor(@Inject(ADMIN_TOKENS) tokens: readonly AdminToken[]) {
    this.known = tokens.map(({ name, scope, token }) => ({
      digest: digest(token),
      identity: { name, scope },
    }));
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new UnauthorizedException({
        code: 'unauthorized',
        message: 'a bearer token is required',
      });
    }
    const identity = this.identify(digest(match[1]));
    if (!identity)
      throw new ForbiddenException({ code: 'forbidden', message: 'the token is not valid' });
    if (decideAccess(identity.scope, request.method).kind === 'read_only') {
      throw new ForbiddenException({
        code: 'token_read_only',
        message: `the token "${identity.name}" may only read; this change needs a full token`,
      });
    }
    request.adminToken = identity;
    return true;
  }

  /** Compares with every token, so the time does not tell which one matched. */
  private identify(presented: Buffer): AdminIdentity | undefined {
    let found: AdminIdentity | undefined;
    for (const { digest: known, identity } of this.known) {
      if (timingSafeEqual(known, presented) && !found) found = identity;
    }
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
