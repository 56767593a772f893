import { headersProblem } from './webhook-rules';

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
    ['a reserved name in any case', { 'USER-AGENT': 'v' }, /cannot be set/],
    ['Host', { host: 'evil' }, /cannot be set/],
    ['Content-Length', { 'Content-Length': '1' }, /cannot be set/],
    ['a number value', { 'X-N': 1 }, /string value/],
    ['a CR', { 'X-A': 'a\rb' }, /CR, LF/],
    ['an LF', { 'X-A': 'a\nb' }, /CR, LF/],
  ])('refuses %s', (_what, headers, message) => {
    expect(headersProblem(headers)).toMatch(message);
  });
});
