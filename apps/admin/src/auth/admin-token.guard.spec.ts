import { ExecutionContext, ForbiddenException, UnauthorizedException } from '@nestjs/common';

import { AdminRequest, AdminTokenGuard } from './admin-token.guard';
import { adminTokens } from './admin-tokens';

const TOKENS = ['first-token-aaaaaaaaaaaaaaaaaaaa', 'second-token-bbbbbbbbbbbbbbbbbbb'];
const READER = 'reader-token-ccccccccccccccccccc';
const WRITER = 'writer-token-ddddddddddddddddddd';

function requestOf(authorization?: string, method = 'GET'): AdminRequest {
  return { method, headers: authorization === undefined ? {} : { authorization } } as AdminRequest;
}

function context(
  authorization?: string,
  method = 'GET',
  request = requestOf(authorization, method),
) {
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

describe(AdminTokenGuard.name, () => {
  const guard = new AdminTokenGuard(
    adminTokens(TOKENS, [
      { name: 'grafana', scope: 'read', token: READER },
      { name: 'deploy-bot', scope: 'full', token: WRITER },
    ]),
  );

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

  it.each([
    [TOKENS[1], 'DELETE', { name: 'default', scope: 'full' }],
    [READER, 'GET', { name: 'grafana', scope: 'read' }],
    [WRITER, 'PATCH', { name: 'deploy-bot', scope: 'full' }],
  ])(
    'lets %s through for %s and marks the request with its name and scope',
    (token, method, identity) => {
      const request = requestOf(`Bearer ${token}`, method);
      expect(guard.canActivate(context(undefined, method, request))).toBe(true);
      expect(request.adminToken).toEqual(identity);
    },
  );

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    'refuses a read-only token a %s with 403 token_read_only',
    (method) => {
      const request = requestOf(`Bearer ${READER}`, method);
      expect(() => guard.canActivate(context(undefined, method, request))).toThrow(
        expect.objectContaining({ response: expect.objectContaining({ code: 'token_read_only' }) }),
      );
      expect(request.adminToken).toBeUndefined();
    },
  );
});
