import { holdsNul } from './nul-text';

describe(holdsNul.name, () => {
  it.each<[string, unknown, boolean]>([
    ['a plain body', { name: 'web', allowedOrigins: ['https://a.example'] }, false],
    ['a literal backslash-u text', { name: '\\u0000' }, false],
    ['numbers, booleans and null', [1, true, null, { a: 2 }], false],
    ['a string', 'a\u0000b', true],
    ['a nested value', { filter: { any: [{ event: 'x\u0000' }] } }, true],
    ['a key', { headers: { 'X-\u0000': 'v' } }, true],
    ['an array item', { userIds: ['u1', '\u0000'] }, true],
    ['a query value list', { event: ['a', 'b\u0000'] }, true],
    ['nothing', undefined, false],
  ])('%s: %s', (_name, value, expected) => {
    expect(holdsNul(value)).toBe(expected);
  });
});
