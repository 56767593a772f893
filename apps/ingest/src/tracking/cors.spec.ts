import type { SourceSettings } from '@app/settings';

import { CORS_ALLOWED_HEADERS, preflightHeaders, sourceAllowsOrigin } from './cors';

const source = (allowedOrigins: string[]): SourceSettings => ({
  id: 's',
  name: 'web',
  enabled: true,
  allowedOrigins,
});

describe(sourceAllowsOrigin.name, () => {
  it.each([
    ['a request without Origin, whatever the list', ['https://a.test'], undefined, true],
    ['any origin when the list is empty', [], 'https://evil.test', true],
    ['a listed origin', ['https://a.test', 'https://b.test'], 'https://b.test', true],
    ['an origin not listed', ['https://a.test'], 'https://evil.test', false],
    ['the same host on another scheme', ['https://a.test'], 'http://a.test', false],
    ['the same host on another port', ['https://a.test'], 'https://a.test:8443', false],
    ['an opaque origin against a list', ['https://a.test'], 'null', false],
  ])('%s', (_what, list, origin, expected) => {
    expect(sourceAllowsOrigin(source(list), origin)).toBe(expected);
  });
});

describe(preflightHeaders.name, () => {
  it('echoes the origin and names Authorization among the allowed headers', () => {
    const headers = preflightHeaders('https://a.test');
    expect(headers).toMatchObject({
      'access-control-allow-origin': 'https://a.test',
      'access-control-allow-methods': 'POST, GET',
      'access-control-max-age': '7200',
      vary: 'Origin',
    });
    // Named, not `*`: a wildcard does not cover Authorization.
    const allowed = CORS_ALLOWED_HEADERS.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-retry-count']),
    );
    expect(allowed).not.toContain('*');
  });
});
