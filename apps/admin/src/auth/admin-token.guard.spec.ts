import { ExecutionContext, ForbiddenException, UnauthorizedException } from '@nestjs/common';

import { AdminTokenGuard } from './admin-token.guard';

const TOKENS = ['first-token-aaaaaaaaaaaaaaaaaaaa', 'second-token-bbbbbbbbbbbbbbbbbbb'];

function context(authorization?: string): ExecutionContext {
  const request = { headers: authorization === undefined ? {} : { authorization } };
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

describe(AdminTokenGuard.name, () => {
  const guard = new AdminTokenGuard(TOKENS);

  it('lets every configured token through', () => {
    for (const token of TOKENS) expect(guard.canActivate(context(`Bearer ${token}`))).toBe(true);
    expect(guard.canActivate(context(`bearer ${TOKENS[0]}`))).toBe(true);
  });

  it('answers 401 without a bearer token', () => {
    expect(() => guard.canActivate(context())).toThrow(UnauthorizedException);
    expect(() => guard.canActivate(context(`Basic ${TOKENS[0]}`))).toThrow(UnauthorizedException);
  });

  it('answers 403 for a wrong token, a prefix or a longer one', () => {
    for (const token of ['nope', TOKENS[0].slice(0, -1), `${TOKENS[0]}x`]) {
      expect(() => guard.canActivate(context(`Bearer ${token}`))).toThrow(ForbiddenException);
    }
  });
});
