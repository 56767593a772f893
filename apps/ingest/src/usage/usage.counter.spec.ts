import { UsageCount } from '@app/settings';

import { UsageCounter } from './usage.counter';

const DAY1 = Date.parse('2026-11-22T23:59:59Z');
const DAY2 = Date.parse('2026-11-23T00:00:01Z');

describe(UsageCounter.name, () => {
  it('counts on the day the clock says, also when it is set back', async () => {
    let now = DAY2;
    const stored: UsageCount[][] = [];
    const counter = new UsageCounter(
      async (counts) => void stored.push([...counts]),
      () => now,
    );
    counter.add('s1', 1);
    now = DAY1;
    counter.add('s1', 2);
    await counter.flush();
    expect(stored).toEqual([
      [
        { sourceId: 's1', day: '2026-11-23', calls: 1 },
        { sourceId: 's1', day: '2026-11-22', calls: 2 },
      ],
    ]);
  });

  it('sums per source and UTC day and stores them in one batch', async () => {
    let now = DAY1;
    const stored: UsageCount[][] = [];
    const counter = new UsageCounter(
      async (counts) => void stored.push([...counts]),
      () => now,
    );
    counter.add('s1', 3);
    counter.add('s1', 2);
    counter.add('s2', 1);
    now = DAY2;
    counter.add('s1', 4);
    await counter.flush();
    expect(stored).toEqual([
      [
        { sourceId: 's1', day: '2026-11-22', calls: 5 },
        { sourceId: 's2', day: '2026-11-22', calls: 1 },
        { sourceId: 's1', day: '2026-11-23', calls: 4 },
      ],
    ]);
    await counter.flush();
    expect(stored).toHaveLength(1);
  });

  it('keeps the counts of a failed flush for the next one', async () => {
    let fail = true;
    const stored: UsageCount[] = [];
    const counter = new UsageCounter(
      async (counts) => {
        if (fail) throw new Error('database away');
        stored.push(...counts);
      },
      () => DAY1,
    );
    counter.add('s1', 2);
    await counter.flush();
    expect(counter.pending()).toBe(2);
    counter.add('s1', 1);
    fail = false;
    await counter.flush();
    expect(stored).toEqual([{ sourceId: 's1', day: '2026-11-22', calls: 3 }]);
    expect(counter.pending()).toBe(0);
  });
});
