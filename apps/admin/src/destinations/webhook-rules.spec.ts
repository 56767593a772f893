import { headersProblem, webhookUrlProblem, withoutCredentials } from './webhook-rules';

describe(headersProblem.name, () => {
  it('accepts up to five token-named string headers', () => {
    expect(headersProblem({})).toBeUndefined();
    expect(
      headersProblem({ 'X-Team': 'a', Authorization: 'Bearer x', "x-!#$%&'*+.^_`|~": 'v' }),
    ).toBeUndefined();
  });

  it.each([
    ['not an object', ['x'], /must be an object/],
    ['six headers', { a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' }, /at most 5/],
    ['a name with a space', { 'X A': 'v' }, /not a valid token/],
    ['an empty name', { '': 'v' }, /not a valid token/],
    ['a reserved name in any case', { 'USER-AGENT': 'v' }, /USER-AGENT cannot be set: Sluice/],
    ['Host', { host: 'evil' }, /cannot be set: Sluice/],
    ['Content-Length', { 'Content-Length': '1' }, /cannot be set: Sluice/],
    ['Content-Type', { 'content-type': 'text/plain' }, /cannot be set: Sluice/],
    ['the signature header', { 'X-Signature': 'forged' }, /cannot be set: Sluice/],
    ['a number value', { 'X-N': 1 }, /string value/],
    ['a CR', { 'X-A': 'a\rb' }, /CR, LF/],
    ['an LF', { 'X-A': 'a\nb' }, /CR, LF/],
  ])('refuses %s', (_what, headers, message) => {
    expect(headersProblem(headers)).toMatch(message);
  });

  it.each([
    'Transfer-Encoding',
    'connection',
    'Keep-Alive',
    'UPGRADE',
    'Expect',
    'TE',
    'Trailer',
    'Proxy-Authorization',
    'proxy-connection',
  ])('refuses the connection-level header %s, naming it', (name) => {
    expect(headersProblem({ 'X-Fine': 'a', [name]: 'v' })).toBe(
      `header ${name} cannot be set: it belongs to the HTTP connection, not the request`,
    );
  });

  it('accepts names that only start like a refused one', () => {
    expect(headersProblem({ 'X-Proxy-Id': 'a', Tea: 'b', 'Connection-Id': 'c' })).toBeUndefined();
  });
});

describe(webhookUrlProblem.name, () => {
  it.each([
    'https://example.com/hooks?x=1',
    'http://receiver:8080/hook',
    'http://my_receiver:8080/hook',
    'http://sluice_webhook_1.internal/in',
    'https://a_b.example.com/',
    'http://127.0.0.1:9000/',
    'http://[::1]:9000/',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['a relative path', '/hooks'],
    ['ftp', 'ftp://example.com/x'],
    ['no protocol', 'example.com/hook'],
    ['a number', 42],
    ['a space in the host', 'http://exa mple.com/'],
  ])('refuses %s', (_what, url) => {
    expect(webhookUrlProblem(url)).toBe('url must be an absolute http or https URL');
  });

  it.each([
    'https://alice:s3cret@example.com/hook',
    'https://alice@example.com/hook',
    'http://:s3cret@my_receiver:8080/hook',
  ])('refuses credentials in %s without repeating them', (url) => {
    const problem = webhookUrlProblem(url);
    expect(problem).toMatch(/must not carry a user or password.*Authorization header/);
    expect(problem).not.toMatch(/alice|s3cret/);
  });
});

describe(withoutCredentials.name, () => {
  it('hides a stored user and password', () => {
    expect(withoutCredentials('https://alice:s3cret@example.com/h?q=1')).toBe(
      'https://***@example.com/h?q=1',
    );
  });

  it('leaves a URL without them as it was stored', () => {
    expect(withoutCredentials('http://my_receiver:8080/hook')).toBe('http://my_receiver:8080/hook');
    expect(withoutCredentials('not a url')).toBe('not a url');
  });
});
