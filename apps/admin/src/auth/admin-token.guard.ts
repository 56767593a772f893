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

/** Injection token of the accepted admin tokens. */
export const ADMIN_TOKENS = Symbol('ADMIN_TOKENS');

/**
 * Guards the admin API with bearer tokens: 401 without one, 403 with a wrong one. Tokens are
 * compared as SHA-256 digests in constant time, so neither content nor length leaks.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly digests: Buffer[];

  constructor(@Inject(ADMIN_TOKENS) tokens: readonly string[]) {
    this.digests = tokens.map(digest);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new UnauthorizedException({
        code: 'unauthorized',
        message: 'a bearer token is required',
      });
    }
    const presented = digest(match[1]);
    // Compare with every token, so the time does not tell which one matched.
    let allowed = false;
    for (const known of this.digests) allowed = timingSafeEqual(known, presented) || allowed;
    if (!allowed)
      throw new ForbiddenException({ code: 'forbidden', message: 'the token is not valid' });
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
