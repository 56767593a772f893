import { BatchFormer, batchBody, BatchTimers } from './batch-former';

/** Timers a test fires by hand. */
class ManualTimers implements BatchTimers {
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  private next = 0;

  set(callback: () => void, ms: number): unknown {
    this.next += 1;
    this.pending.set(this.next, { callback, ms });
    return this.next;
  }

  clear(timer: unknown): void {
    this.pending.delete(timer as number);
  }

  fireAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const { callback } of due) callback();
  }
}

const BOUNDS = { maxCalls: 3, maxBytes: 100, maxWaitMs: 500 };

describe(BatchFormer.name, () => {
  let timers: ManualTimers;
  let formed: [string, string[]][];
  let former: BatchFormer<string>;

  beforeEach(() => {
    timers = new ManualTimers();
    formed = [];
    former = new BatchFormer<string>(
      (key, items) => formed.push([key, items]),
      () => undefined,
      timers,
    );
  });

  it.each([
    ['is full at maxCalls', [10, 10, 10], [['a', 'b', 'c']], 0],
    ['waits for more while under maxCalls and maxBytes', [10, 10], [], 2],
    // [ + 40 + , + 40 = 82; a third 40 would make 123 > 100.
    ['goes before an item that would pass maxBytes', [40, 40, 40], [['a', 'b']], 1],
    ['sends an item larger than maxBytes alone', [200], [['a']], 0],
    ['is full when its body reaches maxBytes exactly', [50, 47], [['a', 'b']], 0],
  ])('%s', (_name, sizes, expected, left) => {
    sizes.forEach((bytes, i) => former.add('k', 'abc'[i], bytes, BOUNDS));
    expect(formed.map(([, items]) => items)).toEqual(expected);
    expect(former.size).toBe(left);
  });

  it('sends a batch once its first item waited maxWaitMs', () => {
    former.add('k', 'a', 10, BOUNDS);
    former.add('k', 'b', 10, BOUNDS);
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([500]);
    timers.fireAll();
    expect(formed).toEqual([['k', ['a', 'b']]]);
    expect(former.size).toBe(0);
  });

  it('clears the timer of a batch sent full', () => {
    for (const item of ['a', 'b', 'c']) former.add('k', item, 10, BOUNDS);
    expect(timers.pending.size).toBe(0);
  });

  it('forms each key apart: one key never waits for another', () => {
    former.add('one', 'a', 10, BOUNDS);
    former.add('two', 'b', 10, BOUNDS);
    former.add('one', 'c', 10, BOUNDS);
    former.add('one', 'd', 10, BOUNDS);
    expect(formed).toEqual([['one', ['a', 'c', 'd']]]);
    expect(former.size).toBe(1);
  });

  it('gives the items of one batch its context, and a new batch a new one', () => {
    let made = 0;
    const counted = new BatchFormer<string, number>(
      () => undefined,
      () => (made += 1),
      timers,
    );
    const contexts = ['a', 'b', 'c', 'd'].map((item) => counted.add('k', item, 10, BOUNDS));
    expect(contexts).toEqual([1, 1, 1, 2]);
  });

  it('hands over every batch at a flush', () => {
    former.add('one', 'a', 10, BOUNDS);
    former.add('two', 'b', 10, BOUNDS);
    former.flush();
    expect(formed).toEqual([
      ['one', ['a']],
      ['two', ['b']],
    ]);
    expect(timers.pending.size).toBe(0);
  });
});

describe(batchBody.name, () => {
  it.each([
    [['{"a":1}'], '[{"a":1}]'],
    [['{"a":1}', '{"b":"ü"}', '{}'], '[{"a":1},{"b":"ü"},{}]'],
  ])('joins %j as one JSON array of the exact bytes', (bodies, expected) => {
    const body = batchBody(bodies.map((b) => Buffer.from(b)));
    expect(body.toString()).toBe(expected);
    expect(body.length).toBe(
      2 + bodies.reduce((n, b) => n + Buffer.byteLength(b), 0) + bodies.length - 1,
    );
  });
});
