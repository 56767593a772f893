import { diffMembers } from './member-diff';

const members = (entries: [string, unknown][]) => new Map(entries);
const audience = (ids: string[]) => new Map(ids.map((id) => [id, true]));

describe(diffMembers.name, () => {
  it('sends true to every member of a first audience sync', () => {
    const diff = diffMembers('audience', new Map(), audience(['a', 'b', 'c']));
    expect(diff.changes).toEqual([
      { userId: 'a', value: true, kind: 'joined' },
      { userId: 'b', value: true, kind: 'joined' },
      { userId: 'c', value: true, kind: 'joined' },
    ]);
    expect(diff).toMatchObject({ joined: 3, left: 0, changed: 0 });
  });

  it('sends true only to users who joined and false only to users who left', () => {
    const diff = diffMembers('audience', audience(['a', 'b', 'c']), audience(['b', 'c', 'd']));
    expect(diff.changes).toEqual([
      { userId: 'd', value: true, kind: 'joined' },
      { userId: 'a', value: false, kind: 'left' },
    ]);
    expect(diff).toMatchObject({ joined: 1, left: 1, changed: 0 });
  });

  it('sends nothing for an unchanged list, whatever its order', () => {
    const diff = diffMembers('audience', audience(['a', 'b']), audience(['b', 'a']));
    expect(diff).toEqual({ changes: [], joined: 0, left: 0, changed: 0 });
  });

  it('sends false to everybody when an audience becomes empty', () => {
    const diff = diffMembers('audience', audience(['a', 'b']), new Map());
    expect(diff.changes.map((c) => c.value)).toEqual([false, false]);
  });

  it('sends a computed trait only to users whose value is new or changed', () => {
    const previous = members([
      ['a', 10],
      ['b', 'gold'],
      ['c', { tier: 1, tags: ['x'] }],
      ['d', true],
    ]);
    const next = members([
      ['a', 10],
      ['b', 'silver'],
      ['c', { tier: 1, tags: ['x'] }],
      ['d', false],
      ['e', 0],
    ]);
    const diff = diffMembers('computed_trait', previous, next);
    expect(diff.changes).toEqual([
      { userId: 'b', value: 'silver', kind: 'changed' },
      { userId: 'd', value: false, kind: 'changed' },
      { userId: 'e', value: 0, kind: 'joined' },
    ]);
    expect(diff).toMatchObject({ joined: 1, left: 0, changed: 2 });
  });

  it('sends null for a computed trait whose user is no longer listed', () => {
    const diff = diffMembers('computed_trait', members([['a', 5]]), new Map());
    expect(diff.changes).toEqual([{ userId: 'a', value: null, kind: 'left' }]);
  });

  it('tells a changed nested value from an equal one', () => {
    const diff = diffMembers(
      'computed_trait',
      members([['a', { n: [1, 2] }]]),
      members([['a', { n: [1, 3] }]]),
    );
    expect(diff.changed).toBe(1);
  });
});
