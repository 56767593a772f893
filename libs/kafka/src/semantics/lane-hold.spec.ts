import { HoldStopReason, LaneHold } from './lane-hold';
import { DurableLater, PartitionPipeline, PipelineControl } from './partition-pipeline';
import { IncomingRecord } from './records';

function record(offset: number, key: string): IncomingRecord {
  return {
    topic: 't',
    partition: 0,
    offset: String(offset),
    key: Buffer.from(key),
    value: Buffer.from('v'),
    headers: {},
    timestamp: 0,
  };
}

class Control implements PipelineControl {
  readonly commits: string[] = [];
  readonly rewinds: string[] = [];
  readonly holds: string[] = [];
  releases = 0;
  commit(next: string): Promise<void> {
    this.commits.push(next);
    return Promise.resolve();
  }
  rewind(offset: string): void {
    this.rewinds.push(offset);
  }
  failed(): void {}
  hold(offset: string): void {
    this.holds.push(offset);
  }
  release(): void {
    this.releases += 1;
  }
}

/**
 * A handler that answers a LaneHold for the records of keys starting with `held`, and at once
 * for the others; each hold settles when the test says so, and records the stops asked.
 */
class Holder {
  readonly started: string[] = [];
  readonly stops: { offset: string; reason: HoldStopReason }[] = [];
  private readonly settles = new Map<string, (answer: unknown) => void>();
  private readonly refusals = new Map<string, (error: Error) => void>();

  constructor(private readonly maxWaiting = 100) {}

  readonly handle = (r: IncomingRecord): Promise<unknown> => {
    this.started.push(r.offset);
    if (!r.key!.toString().startsWith('held')) return Promise.resolve(undefined);
    const settled = new Promise<unknown>((resolve, reject) => {
      this.settles.set(r.offset, resolve);
      this.refusals.set(r.offset, reject);
    });
    const stop = (reason: HoldStopReason) => this.stops.push({ offset: r.offset, reason });
    return Promise.resolve(new LaneHold(settled, stop, this.maxWaiting));
  };

  settle(offset: number, answer?: unknown): void {
    this.settles.get(String(offset))!(answer);
  }

  refuse(offset: number): void {
    this.refusals.get(String(offset))!(new Error(`refused ${offset}`));
  }
}

const tick = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};
const always = (): boolean => true;

function pipeline(holder: Holder, control: Control, maxInFlight = 2, laneRoomWaitMs = 1_000) {
  return new PartitionPipeline(
    holder.handle,
    {
      maxInFlight,
      dueAt: () => undefined,
      dueWindowMs: 0,
      now: () => 1_000,
      failureBackoffMs: 500,
      admissionWaitMs: 20,
      laneRoomWaitMs,
    },
    control,
  );
}

describe('PartitionPipeline with handlers answering LaneHold', () => {
  it('frees the slot but keeps the lane: the key waits, other keys run, nothing is committed past it', async () => {
    const holder = new Holder();
    const control = new Control();
    // One slot: other keys run only because the held record gave its slot up.
    const p = pipeline(holder, control, 1);
    await p.admit(
      [record(0, 'held-u'), record(1, 'held-u'), record(2, 'a'), record(3, 'b')],
      always,
    );
    await tick();
    expect(holder.started).toEqual(['0', '2', '3']);
    expect(control.commits).toEqual([]);
    holder.settle(0);
    await tick();
    expect(holder.started).toEqual(['0', '2', '3', '1']);
    expect(control.commits.at(-1)).toBe('1');
    holder.settle(1);
    await p.drain();
    expect(control.commits.at(-1)).toBe('4');
  });

  it('waits for a DurableLater answered when the hold settles', async () => {
    const holder = new Holder();
    const control = new Control();
    const p = pipeline(holder, control);
    await p.admit([record(0, 'held-u')], always);
    await tick();
    let makeDurable!: () => void;
    const durable = new Promise<void>((resolve) => (makeDurable = resolve));
    holder.settle(0, new DurableLater(durable));
    await tick();
    expect(control.commits).toEqual([]);
    makeDurable();
    await p.drain();
    expect(control.commits).toEqual(['1']);
  });

  it('asks the hold to stop once as many records of its key wait as it allows', async () => {
    const holder = new Holder(2);
    const control = new Control();
    const p = pipeline(holder, control, 10);
    await p.admit([record(0, 'held-u'), record(1, 'held-u')], always);
    await tick();
    expect(holder.stops).toEqual([]);
    await p.admit([record(2, 'held-u'), record(3, 'held-u')], always);
    await tick();
    expect(holder.stops).toEqual([{ offset: '0', reason: 'pending' }]);
  });

  it('asks the oldest hold to stop when the lines stay full and nothing finishes', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const holder = new Holder();
      const control = new Control();
      const p = pipeline(holder, control, 2, 1_000);
      // Two held keys, each with a line; the lines (2 at most) fill and the partition holds.
      const batch = [0, 1, 2, 3, 4].map((o) => record(o, o % 2 === 0 ? 'held-a' : 'held-b'));
      expect(await p.admit(batch, always)).toBe('3');
      await tick();
      expect(control.holds).toEqual(['4']);
      jest.advanceTimersByTime(999);
      expect(holder.stops).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(holder.stops).toEqual([{ offset: '0', reason: 'partition_full' }]);
      // The stopped hold settles: its lane runs on, the partition fetches again.
      holder.settle(0);
      await tick();
      expect(control.releases).toBeGreaterThanOrEqual(1);
      expect(holder.started).toEqual(['0', '1', '2']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('asks no hold to stop while records keep finishing', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    try {
      const holder = new Holder();
      const control = new Control();
      const p = pipeline(holder, control, 2, 1_000);
      const batch = [0, 1, 2, 3, 4].map((o) => record(o, o % 2 === 0 ? 'held-a' : 'held-b'));
      await p.admit(batch, always);
      await tick();
      jest.advanceTimersByTime(500);
      holder.settle(1);
      await tick();
      jest.advanceTimersByTime(600);
      expect(holder.stops).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('abandons its holds: they stop, drain resolves, nothing past them is committed, a late answer is ignored', async () => {
    const holder = new Holder();
    const control = new Control();
    const p = pipeline(holder, control);
    await p.admit(
      [record(0, 'a'), record(1, 'held-u'), record(2, 'held-u'), record(3, 'b')],
      always,
    );
    await tick();
    p.abandonHolds();
    await expect(p.drain()).resolves.toBeUndefined();
    expect(holder.stops).toEqual([{ offset: '1', reason: 'abandon' }]);
    expect(control.commits.at(-1)).toBe('1');
    expect(p.firstUnfinished()).toBe('1');
    holder.settle(1);
    await tick();
    expect(holder.started).toEqual(['0', '1', '3']);
    expect(control.commits.at(-1)).toBe('1');
  });

  it('treats a refused hold as a failure: rewinds to the record once all settled', async () => {
    const holder = new Holder();
    const control = new Control();
    const p = pipeline(holder, control);
    await p.admit([record(0, 'held-u'), record(1, 'held-u')], always);
    await tick();
    holder.refuse(0);
    await p.drain();
    expect(control.rewinds).toEqual(['0']);
    expect(control.commits).toEqual([]);
  });
});
