import { bucketCapacity, groupTotal, RATE_HEADROOM, replicaShare, TokenBucket } from './rate-limit';

const T0 = 1_700_000_000_000;

/** The most times (ascending, ms) in any window [t, t + 1000). */
function busiestSecond(times: readonly number[]): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end] - times[start] >= 1000) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

describe(replicaShare.name, () => {
  it.each([
    ['all partitions', 50, [{ owned: 2, total: 2 }], 50],
    ['half of them', 50, [{ owned: 1, total: 2 }], 25],
    ['none', 50, [{ owned: 0, total: 2 }], 0],
    [
      'main and tiers pooled',
      60,
      [
        { owned: 1, total: 2 },
        { owned: 2, total: 4 },
      ],
      30,
    ],
    [
      'a group not joined yet',
      60,
      [
        { owned: 2, total: 2 },
        { owned: 0, total: 4 },
      ],
      20,
    ],
    ['no partitions at all', 50, [], 0],
  ])('gives %s its share (less the headroom)', (_name, limit, groups, expected) => {
    expect(replicaShare(limit, groups)).toBeCloseTo(expected * RATE_HEADROOM, 9);
  });

  it('adds up to the limit less the headroom over replicas that split the partitions', () => {
    const a = replicaShare(50, [
      { owned: 1, total: 2 },
      { owned: 3, total: 10 },
    ]);
    const b = replicaShare(50, [
      { owned: 1, total: 2 },
      { owned: 7, total: 10 },
    ]);
    expect(a + b).toBeCloseTo(50 * RATE_HEADROOM, 9);
  });
});

describe(groupTotal.name, () => {
  it.each([
    ['the configured count', 2, 3, new Map([['t', [0, 1]]]), 6],
    ['more when a partition number shows it', 2, 1, new Map([['t', [3]]]), 4],
    ['the configured count with nothing owned', 2, 5, new Map<string, number[]>(), 10],
  ])('counts %s', (_name, perTopic, topics, owned, expected) => {
    expect(groupTotal(perTopic, topics, owned)).toBe(expected);
  });
});

describe(bucketCapacity.name, () => {
  it.each([
    [25, 1],
    [0.5, 1],
    [5_000, 100],
  ])('holds at most %d/s x 20 ms, at least one token', (rate, expected) => {
    expect(bucketCapacity(rate)).toBe(expected);
  });
});

describe(TokenBucket.name, () => {
  it('starts with one token and refills at its rate', () => {
    const bucket = new TokenBucket(10, T0);
    expect(bucket.tryTake(T0)).toBe(true);
    expect(bucket.tryTake(T0)).toBe(false);
    expect(bucket.waitMs(T0)).toBe(100);
    expect(bucket.tryTake(T0 + 99)).toBe(false);
    expect(bucket.tryTake(T0 + 100)).toBe(true);
  });

  it('never holds more than its capacity, however long it was idle', () => {
    const bucket = new TokenBucket(25, T0);
    const later = T0 + 60_000;
    expect(bucket.tryTake(later)).toBe(true);
    expect(bucket.tryTake(later)).toBe(false);
  });

  it.each([
    ['25/s', 25],
    ['1/s', 1],
    ['5,000/s', 5_000],
  ])('at %s, takes at most capacity + rate x T in any window of T', (_name, rate) => {
    const bucket = new TokenBucket(rate, T0);
    const taken: number[] = [];
    // Someone asks every millisecond for 3 s.
    for (let t = T0; t < T0 + 3_000; t += 1) {
      while (bucket.tryTake(t)) taken.push(t);
    }
    expect(busiestSecond(taken)).toBeLessThanOrEqual(Math.floor(bucketCapacity(rate) + rate));
    expect(taken.length).toBeGreaterThanOrEqual(Math.floor(rate * 2.99));
  });

  it('gives nothing at a rate of 0, and waits for ever', () => {
    const bucket = new TokenBucket(0, T0);
    expect(bucket.tryTake(T0)).toBe(false);
    expect(bucket.waitMs(T0 + 10_000)).toBe(Infinity);
  });

  it('follows a new rate, keeping what it gathered up to the new capacity', () => {
    const bucket = new TokenBucket(0, T0);
    bucket.setRate(10, T0);
    expect(bucket.waitMs(T0)).toBe(100);
    expect(bucket.tryTake(T0 + 100)).toBe(true);
    bucket.setRate(0, T0 + 150);
    expect(bucket.waitMs(T0 + 10_000)).toBe(Infinity);
    expect(bucket.ratePerSecond).toBe(0);
  });
});
