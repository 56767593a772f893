import { nestsDeeperThan } from './json';

/** `levels` arrays inside one another: `[[[]]]` for 3. */
function arrays(levels: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < levels; i += 1) value = [value];
  return value;
}

describe(nestsDeeperThan.name, () => {
  it.each([
    ['a scalar', 'x', 0, false],
    ['null', null, 0, false],
    ['an empty object at depth 1', {}, 1, false],
    ['an empty object past depth 0', {}, 0, true],
    ['an object in an array at its limit', [{ a: 1 }], 2, false],
    ['an object in an array past its limit', [{ a: 1 }], 1, true],
    ['the deepest branch, not the first', { a: 1, b: { c: [1, [2]] } }, 3, true],
    ['the same within 4', { a: 1, b: { c: [1, [2]] } }, 4, false],
  ])('%s', (_what, value, maxDepth, expected) => {
    expect(nestsDeeperThan(value, maxDepth)).toBe(expected);
  });

  it('stops at the limit on input far deeper than the stack allows', () => {
    const deep = JSON.parse(`${'['.repeat(500_000)}${']'.repeat(500_000)}`) as unknown;
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(nestsDeeperThan(arrays(64), 64)).toBe(false);
    expect(nestsDeeperThan(arrays(65), 64)).toBe(true);
  });
});
