import { laneOf, Lanes } from './lanes';

describe('laneOf', () => {
  it.each([
    ['no key', null, undefined],
    ['an empty key (the FNV offset basis)', Buffer.alloc(0), 0x811c9dc5],
    ['"a" (FNV-1a test vector)', Buffer.from('a'), 0xe40c292c],
    ['"foobar" (FNV-1a test vector)', Buffer.from('foobar'), 0xbf9cf968],
  ])('hashes %s', (_, key, lane) => {
    expect(laneOf(key)).toBe(lane);
  });
});

describe(Lanes.name, () => {
  it('keeps a running lane open with nothing waiting until its next record is asked for', () => {
    const lanes = new Lanes<string>();
    lanes.open(1);
    expect(lanes.has(1)).toBe(true);
    expect(lanes.next(1)).toBeUndefined();
    expect(lanes.has(1)).toBe(false);
  });

  it("hands a lane's waiting records out in order, counting them", () => {
    const lanes = new Lanes<string>();
    lanes.open(1);
    expect(lanes.enqueue(1, 'a')).toBe(1);
    expect(lanes.enqueue(1, 'b')).toBe(2);
    expect(lanes.enqueue(2, 'c')).toBe(1);
    expect([lanes.queued, lanes.waiting(1), lanes.waiting(3)]).toEqual([3, 2, 0]);
    expect(lanes.next(1)).toBe('a');
    expect(lanes.next(1)).toBe('b');
    // The last record taken runs: its lane stays open behind it.
    expect([lanes.has(1), lanes.queued]).toEqual([true, 1]);
    expect(lanes.next(1)).toBeUndefined();
    expect(lanes.has(1)).toBe(false);
  });

  it('drops a lane with its waiting records, and clears them all', () => {
    const lanes = new Lanes<string>();
    lanes.enqueue(1, 'a');
    lanes.enqueue(1, 'b');
    lanes.enqueue(2, 'c');
    expect(lanes.drop(1)).toBe(2);
    expect([lanes.has(1), lanes.queued]).toEqual([false, 1]);
    lanes.clear();
    expect([lanes.has(2), lanes.queued]).toEqual([false, 0]);
  });
});
