import type { Consumer } from 'kafkajs';

import { PartitionControl } from './partition-control';

/** The calls a consumer received, in order, as short strings. */
class FakeConsumer {
  readonly calls: string[] = [];
  failing = false;
  pausedNow: { topic: string; partitions: number[] }[] = [];

  pause(topics: { topic: string; partitions?: number[] }[]): void {
    this.act(
      `pause ${topics.map((t) => `${t.topic}[${t.partitions?.join(',') ?? '*'}]`).join(' ')}`,
    );
  }

  seek({ topic, partition, offset }: { topic: string; partition: number; offset: string }): void {
    this.act(`seek ${topic}[${partition}]@${offset}`);
  }

  resume(topics: { topic: string; partitions?: number[] }[]): void {
    this.act(
      `resume ${topics.map((t) => `${t.topic}[${t.partitions?.join(',') ?? '*'}]`).join(' ')}`,
    );
  }

  paused(): { topic: string; partitions: number[] }[] {
    return this.pausedNow;
  }

  private act(call: string): void {
    if (this.failing) throw new Error('consumer restarting');
    this.calls.push(call);
  }
}

describe(PartitionControl.name, () => {
  let now: number;
  let consumer: FakeConsumer | undefined;
  let skipped: string[];
  let control: PartitionControl;

  beforeEach(() => {
    jest.useFakeTimers();
    now = 1_000;
    consumer = new FakeConsumer();
    skipped = [];
    control = new PartitionControl(
      () => consumer as unknown as Consumer | undefined,
      () => now,
      (what, error) => skipped.push(`${what}: ${(error as Error).message}`),
    );
  });
  afterEach(() => jest.useRealTimers());

  const cases: [string, () => void, boolean][] = [
    ['nothing paused', () => undefined, false],
    ['a held partition', () => control.hold('t', 0, '5'), true],
    ['a partition stopped after a failure', () => control.pauseAfterFailure('t', 0), true],
    [
      'a held partition released again',
      () => {
        control.hold('t', 0, '5');
        control.release('t', 0);
      },
      false,
    ],
    ['a resume timer within the time', () => control.pauseUntil('t', 0, '5', 2_999), true],
    ['a resume timer beyond it', () => control.pauseUntil('t', 0, '5', 3_000), false],
    [
      'a held partition rewound until due later',
      () => {
        control.hold('t', 0, '5');
        control.pauseUntil('t', 0, '5', 60_000);
      },
      false,
    ],
    [
      'a held partition after a new assignment',
      () => {
        control.hold('t', 0, '5');
        control.resumeAll();
      },
      false,
    ],
  ];
  it.each(cases)('says whether a partition flows again within 2 s: %s', (_, act, soon) => {
    act();
    expect(control.resumesWithin(now, 2_000)).toBe(soon);
  });

  it('pauses and rewinds a partition until its due time, then resumes it', () => {
    control.pauseUntil('t', 1, '42', 1_500);
    expect(consumer?.calls).toEqual(['pause t[1]', 'seek t[1]@42']);
    jest.advanceTimersByTime(499);
    expect(consumer?.calls).toHaveLength(2);
    jest.advanceTimersByTime(1);
    expect(consumer?.calls).toEqual(['pause t[1]', 'seek t[1]@42', 'resume t[1]']);
  });

  it('keeps one resume timer per partition: a later pause replaces the earlier', () => {
    control.pauseUntil('t', 0, '1', 2_000);
    control.pauseUntil('t', 0, '1', 1_200);
    jest.advanceTimersByTime(1_000);
    expect(consumer?.calls.filter((c) => c.startsWith('resume'))).toEqual(['resume t[0]']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('resumes at once a partition whose due time has passed', () => {
    control.pauseUntil('t', 0, '1', 400);
    jest.advanceTimersByTime(0);
    expect(consumer?.calls).toEqual(['pause t[0]', 'seek t[0]@1', 'resume t[0]']);
  });

  it('holds a partition until released, cancelling a resume timer it had', () => {
    control.pauseUntil('t', 2, '5', 9_000);
    control.hold('t', 2, '7');
    jest.advanceTimersByTime(10_000);
    expect(consumer?.calls).toEqual(['pause t[2]', 'seek t[2]@5', 'pause t[2]', 'seek t[2]@7']);
    control.release('t', 2);
    expect(consumer?.calls.at(-1)).toBe('resume t[2]');
  });

  it('pauses a partition after a failure without resuming it later', () => {
    control.pauseUntil('t', 0, '3', 2_000);
    control.pauseAfterFailure('t', 0);
    jest.advanceTimersByTime(5_000);
    expect(consumer?.calls).toEqual(['pause t[0]', 'seek t[0]@3', 'pause t[0]']);
  });

  it('resumes every paused partition and forgets their timers after a rebalance', () => {
    control.pauseUntil('t', 0, '3', 5_000);
    consumer!.pausedNow = [{ topic: 't', partitions: [0] }];
    control.resumeAll();
    expect(consumer?.calls.at(-1)).toBe('resume t[0]');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('pauses whole topics before a close', () => {
    control.pauseTopics(['a', 'b']);
    expect(consumer?.calls).toEqual(['pause a[*] b[*]']);
  });

  it('skips and reports what a restarting consumer refuses, never throwing', () => {
    consumer!.failing = true;
    expect(() => {
      control.hold('t', 0, '1');
      control.release('t', 0);
      control.pauseAfterFailure('t', 0);
      control.rewind('t', 0, '1');
      control.pauseTopics(['t']);
    }).not.toThrow();
    expect(skipped).toEqual([
      'hold: consumer restarting',
      'release: consumer restarting',
      'pause after a failure: consumer restarting',
      'rewind after a rebalance: consumer restarting',
      'pause before closing: consumer restarting',
    ]);
  });

  it('does nothing to a partition while there is no consumer', () => {
    consumer = undefined;
    control.pauseUntil('t', 0, '1', 2_000);
    expect(jest.getTimerCount()).toBe(0);
  });
});
