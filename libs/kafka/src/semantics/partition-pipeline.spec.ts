import {
  DurableLater,
  PartitionPipeline,
  PipelineControl,
  PipelineOptions,
} from './partition-pipeline';
import { IncomingRecord } from './records';

function record(offset: number, key?: string, dueAt?: number): IncomingRecord {
  return {
    topic: 't',
    partition: 0,
    offset: String(offset),
    key: key === undefined ? null : Buffer.from(key),
    value: Buffer.from('v'),
    headers: dueAt === undefined ? {} : { due: Buffer.from(String(dueAt)) },
    timestamp: 0,
  };
}

/** A handler whose calls finish when the test says so. */
class Gates {
  readonly started: string[] = [];
  private readonly waiting = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();

  readonly handle = (r: IncomingRecord): Promise<void> => {
    this.started.push(r.offset);
    return new Promise((resolve, reject) => this.waiting.set(r.offset, { resolve, reject }));
  };

  finish(offset: number): void {
    this.waiting.get(String(offset))!.resolve();
  }

  fail(offset: number): void {
    this.waiting.get(String(offset))!.reject(new Error(`boom ${offset}`));
  }
}

class Control implements PipelineControl {
  readonly commits: string[] = [];
  readonly rewinds: { offset: string; resumeAt: number }[] = [];
  readonly failures: string[] = [];
  readonly holds: string[] = [];
  releases = 0;
  commit(next: string): Promise<void> {
    this.commits.push(next);
    return Promise.resolve();
  }
  rewind(offset: string, resumeAt: number): void {
    this.rewinds.push({ offset, resumeAt });
  }
  failed(offset: string): void {
    this.failures.push(offset);
  }
  hold(offset: string): void {
    this.holds.push(offset);
  }
  release(): void {
    this.releases += 1;
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The options every spec here starts from, `fields` changed. */
function options(fields: Partial<PipelineOptions> = {}): PipelineOptions {
  return {
    maxInFlight: 10,
    dueAt: (r) => (r.headers.due ? Number(r.headers.due.toString()) : undefined),
    dueWindowMs: 0,
    now: () => 1_000,
    failureBackoffMs: 500,
    admissionWaitMs: 20,
    ...fields,
  };
}

function pipeline(
  gates: Gates,
  control: Control,
  maxInFlight = 10,
  now: number | (() => number) = 1_000,
  dueWindowMs = 0,
) {
  return new PartitionPipeline(
    gates.handle,
    options({ maxInFlight, dueWindowMs, now: typeof now === 'number' ? () => now : now }),
    control,
  );
}

const always = (): boolean => true;

describe('PartitionPipeline', () => {
  it('admits across batches while a slow record is in flight, and commits only the finished prefix', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    expect(await p.admit([record(0, 'slow'), record(1, 'a')], always)).toBe('1');
    // The next batch is admitted although offset 0 has not finished.
    expect(await p.admit([record(2, 'b')], always)).toBe('2');
    await tick();
    expect(gates.started).toEqual(['0', '1', '2']);
    gates.finish(1);
    gates.finish(2);
    await tick();
    expect(control.commits).toEqual([]);
    gates.finish(0);
    await tick();
    expect(control.commits).toEqual(['3']);
  });

  it('runs records of one key in order, others at once', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    await p.admit([record(0, 'k'), record(1, 'k'), record(2, 'other')], always);
    await tick();
    await tick();
    expect(gates.started).toEqual(['0', '2']);
    gates.finish(0);
    await tick();
    await tick();
    expect(gates.started).toEqual(['0', '2', '1']);
  });

  it('lines records up behind a running record of their key without taking slots, and runs the line in one slot', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control, 2);
    // Slot 1 runs k@0 and then its line (1, 2); slot 2 takes a, then b once a finishes.
    expect(
      await p.admit([record(0, 'k'), record(1, 'k'), record(2, 'k'), record(3, 'a')], always),
    ).toBe('3');
    expect(control.holds).toEqual([]);
    await tick();
    expect(gates.started).toEqual(['0', '3']);
    const admitted = p.admit([record(4, 'b')], always);
    gates.finish(3);
    expect(await admitted).toBe('4');
    await tick();
    expect(gates.started).toEqual(['0', '3', '4']);
    gates.finish(0);
    await tick();
    expect(gates.started).toEqual(['0', '3', '4', '1']);
    gates.finish(1);
    await tick();
    expect(gates.started).toEqual(['0', '3', '4', '1', '2']);
    gates.finish(2);
    gates.finish(4);
    await tick();
    expect(control.commits.at(-1)).toBe('5');
  });

  it('holds the partition once as many records wait in lines as may run', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control, 2);
    expect(
      await p.admit([record(0, 'k'), record(1, 'k'), record(2, 'k'), record(3, 'k')], always),
    ).toBe('2');
    expect(control.holds).toEqual(['3']);
    gates.finish(0);
    await tick();
    expect(control.releases).toBe(1);
    expect(gates.started).toEqual(['0', '1']);
    expect(await p.admit([record(3, 'k')], always)).toBe('3');
  });

  it('holds the partition at the first record without a slot, and releases it when one frees', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control, 2);
    expect(await p.admit([record(0, 'a'), record(1, 'b'), record(2, 'c')], always)).toBe('1');
    expect(control.holds).toEqual(['2']);
    await tick();
    expect(gates.started).toEqual(['0', '1']);
    gates.finish(1);
    await tick();
    expect(control.releases).toBe(1);
    // Fetched again from the held record.
    expect(await p.admit([record(2, 'c')], always)).toBe('2');
    await tick();
    expect(gates.started).toEqual(['0', '1', '2']);
  });

  it('takes a slot freed within the admission wait, without holding the partition', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control, 1);
    const admitted = p.admit([record(0, 'a'), record(1, 'b')], always);
    await tick();
    gates.finish(0);
    expect(await admitted).toBe('1');
    expect(control.holds).toEqual([]);
  });

  it('names the first unfinished record, where a new owner must start', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    await p.admit([record(0, 'a'), record(1, 'b'), record(2, 'c')], always);
    await tick();
    gates.finish(0);
    gates.finish(2);
    await tick();
    expect(p.firstUnfinished()).toBe('1');
    gates.finish(1);
    await tick();
    expect(p.firstUnfinished()).toBeUndefined();
  });

  it('rewinds to a record not yet due and admits nothing after it', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control, 10, 1_000);
    const last = await p.admit([record(0, 'a'), record(1, 'b', 5_000), record(2, 'c')], always);
    expect(last).toBe('0');
    expect(control.rewinds).toEqual([{ offset: '1', resumeAt: 5_000 }]);
    await tick();
    expect(gates.started).toEqual(['0']);
  });

  it('admits records due within the window, runs each when due, and rewinds to the first beyond it, to resume a window early', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'], now: 1_000 });
    try {
      const gates = new Gates();
      const control = new Control();
      const p = pipeline(gates, control, 10, () => Date.now(), 500);
      const batch = [record(0, 'a', 1_200), record(1, 'b', 1_500), record(2, 'c', 1_501)];
      expect(await p.admit(batch, always)).toBe('1');
      expect(control.rewinds).toEqual([{ offset: '2', resumeAt: 1_001 }]);
      await tick();
      expect(gates.started).toEqual([]);
      jest.advanceTimersByTime(199);
      await tick();
      expect(gates.started).toEqual([]);
      jest.advanceTimersByTime(1);
      await tick();
      expect(gates.started).toEqual(['0']);
      jest.advanceTimersByTime(300);
      await tick();
      expect(gates.started).toEqual(['0', '1']);
      // A record without a due time admitted behind a waiting one starts after it.
      expect(await p.admit([record(2, 'c', 1_501), record(3, 'd')], always)).toBe('3');
      jest.advanceTimersByTime(1);
      await tick();
      expect(gates.started).toEqual(['0', '1', '2', '3']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('after a failure, stops admitting, lets the records in flight finish, commits before it, then rewinds to it', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    await p.admit([record(0, 'a'), record(1, 'b'), record(2, 'c')], always);
    await tick();
    gates.fail(1);
    await tick();
    expect(control.failures).toEqual(['1']);
    expect(await p.admit([record(3, 'd')], always)).toBeUndefined();
    expect(control.rewinds).toEqual([]);
    gates.finish(0);
    gates.finish(2);
    await tick();
    expect(control.commits).toEqual(['1']);
    expect(control.rewinds).toEqual([{ offset: '1', resumeAt: 1_500 }]);
    // Fetched again from the failed record: it and what follows are admitted anew.
    expect(await p.admit([record(1, 'b'), record(2, 'c')], always)).toBe('2');
    await tick();
    expect(gates.started).toEqual(['0', '1', '2', '1', '2']);
  });

  it('skips records of a batch that were already admitted', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    await p.admit([record(0, 'a'), record(1, 'b')], always);
    expect(await p.admit([record(1, 'b'), record(2, 'c')], always)).toBe('2');
    await tick();
    expect(gates.started).toEqual(['0', '1', '2']);
  });

  it('stops admitting when the consumer stops running, and drain waits for what is in flight', async () => {
    const gates = new Gates();
    const control = new Control();
    const p = pipeline(gates, control);
    let running = true;
    await p.admit([record(0, 'a')], () => running);
    running = false;
    expect(await p.admit([record(1, 'b')], () => running)).toBeUndefined();
    let drained = false;
    const draining = p.drain().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    gates.finish(0);
    await draining;
    expect(control.commits).toEqual(['1']);
  });
});

describe.each([
  ['in a promise', false],
  ['at once, not in a promise', true],
])('PartitionPipeline with handlers answering DurableLater %s', (_how, atOnce) => {
  /** A handler's answer, in a promise or not as the table says. */
  const answer = (later: DurableLater): Promise<DurableLater> | DurableLater =>
    atOnce ? later : Promise.resolve(later);

  /** Each record's handler answers at once; its durability waits until the test says so. */
  class Later {
    readonly started: string[] = [];
    private readonly durable = new Map<
      string,
      { resolve: () => void; reject: (e: Error) => void }
    >();

    readonly handle = (r: IncomingRecord): Promise<DurableLater> | DurableLater => {
      this.started.push(r.offset);
      const durable = new Promise<void>((resolve, reject) =>
        this.durable.set(r.offset, { resolve, reject }),
      );
      return answer(new DurableLater(durable));
    };

    settle(offset: number): void {
      this.durable.get(String(offset))!.resolve();
    }

    refuse(offset: number): void {
      this.durable.get(String(offset))!.reject(new Error(`refused ${offset}`));
    }
  }

  function laterPipeline(later: Later, control: Control, maxInFlight = 1) {
    return new PartitionPipeline(later.handle, options({ maxInFlight }), control);
  }

  it('frees the slot and the key line at once, and commits only once durable', async () => {
    const later = new Later();
    const control = new Control();
    const p = laterPipeline(later, control, 1);
    await p.admit([record(0, 'k'), record(1, 'k'), record(2, 'other')], always);
    await tick();
    // One slot, yet all three ran: none held it while its effects were on their way.
    expect(later.started).toEqual(['0', '1', '2']);
    expect(control.commits).toEqual([]);
    later.settle(1);
    await tick();
    expect(control.commits).toEqual([]);
    later.settle(0);
    await tick();
    expect(control.commits).toEqual(['2']);
    later.settle(2);
    await p.drain();
    expect(control.commits).toEqual(['2', '3']);
  });

  it('fetches a partition held for room again once its lines drained, before anything is durable', async () => {
    const later = new Later();
    const control = new Control();
    const p = laterPipeline(later, control, 2);
    const records = [0, 1, 2, 3].map((offset) => record(offset, 'k'));
    if (atOnce) {
      // Each record's slot is free again before the next one is admitted: nothing to hold.
      expect(await p.admit(records, always)).toBe('3');
      expect(control.holds).toEqual([]);
      return;
    }
    expect(await p.admit(records, always)).toBe('2');
    expect(control.holds).toEqual(['3']);
    await tick();
    expect(later.started).toEqual(['0', '1', '2']);
    expect(control.releases).toBe(1);
    expect(control.commits).toEqual([]);
    expect(await p.admit([record(3, 'k')], always)).toBe('3');
  });

  it('keeps a partition held while fewer than half its slots are free', async () => {
    const gates = new Gates();
    const control = new Control();
    // Key `d` answers DurableLater at once; the others hold their slots until finished.
    const handle = (r: IncomingRecord): Promise<unknown> | DurableLater =>
      r.key?.toString() === 'd'
        ? answer(new DurableLater(new Promise<void>(() => undefined)))
        : gates.handle(r);
    const p = new PartitionPipeline(handle, options({ maxInFlight: 4 }), control);
    const keys = ['a', 'b', 'c', 'd', 'd', 'd', 'd', 'd', 'd'];
    if (atOnce) {
      // The calls of `d` share the one slot left, each freeing it before the next.
      expect(
        await p.admit(
          keys.map((key, offset) => record(offset, key)),
          always,
        ),
      ).toBe('8');
      expect(control.holds).toEqual([]);
      return;
    }
    expect(
      await p.admit(
        keys.map((key, offset) => record(offset, key)),
        always,
      ),
    ).toBe('7');
    expect(control.holds).toEqual(['8']);
    await tick();
    // The line of `d` drained, but only one slot of four is free.
    expect(control.releases).toBe(0);
    gates.finish(0);
    await tick();
    expect(control.releases).toBe(1);
  });

  it('treats a refused durability as a failure: rewinds to that record once all settled', async () => {
    const later = new Later();
    const control = new Control();
    const p = laterPipeline(later, control, 4);
    await p.admit([record(0), record(1)], always);
    await tick();
    later.refuse(0);
    later.settle(1);
    await p.drain();
    expect(control.failures).toEqual(['0']);
    expect(control.commits).toEqual([]);
    expect(control.rewinds).toEqual([{ offset: '0', resumeAt: 1_500 }]);
  });

  it('fails a record whose handler threw rather than answered, and rewinds to it', async () => {
    const later = new Later();
    const control = new Control();
    const handle = (r: IncomingRecord): Promise<DurableLater> | DurableLater => {
      if (r.offset === '1') throw new Error('no answer');
      return later.handle(r);
    };
    const p = new PartitionPipeline(handle, options({ maxInFlight: 4 }), control);
    await p.admit([record(0), record(1)], always);
    later.settle(0);
    await p.drain();
    expect(control.failures).toEqual(['1']);
    expect(control.commits).toEqual(['1']);
    expect(control.rewinds).toEqual([{ offset: '1', resumeAt: 1_500 }]);
  });

  /** Handlers answering one shared wait, as the dispatcher's outcomes of one record do. */
  function sharedPipeline(wait: () => DurableLater, control: Control) {
    return new PartitionPipeline(() => answer(wait()), options({ maxInFlight: 2 }), control);
  }

  it('finishes every record sharing one wait when it settles, and those answered after it', async () => {
    let resolve!: () => void;
    const shared = new DurableLater(new Promise<void>((ok) => (resolve = ok)));
    const control = new Control();
    const p = sharedPipeline(() => shared, control);
    await p.admit([record(0), record(1), record(2)], always);
    await tick();
    expect(control.commits).toEqual([]);
    resolve();
    await tick();
    expect(control.commits).toEqual(['3']);
    // The wait has settled; records answered with it now still finish.
    await p.admit([record(3)], always);
    await p.drain();
    expect(control.commits).toEqual(['3', '4']);
  });

  it('fails every record sharing a refused wait', async () => {
    let reject!: (e: Error) => void;
    const shared = new DurableLater(new Promise<void>((_, fail) => (reject = fail)));
    const control = new Control();
    const p = sharedPipeline(() => shared, control);
    await p.admit([record(0), record(1)], always);
    await tick();
    reject(new Error('refused'));
    await p.drain();
    expect(control.failures).toEqual(['0', '1']);
    expect(control.commits).toEqual([]);
  });

  it('commits without handling again the records an earlier pipeline finished, then handles the rest', async () => {
    const gates = new Gates();
    const control = new Control();
    let earlier: bigint | undefined = 12n;
    const p = new PartitionPipeline(
      gates.handle,
      options({ now: () => 0, finishedBefore: () => earlier }),
      control,
    );
    // Fetched again from the last offset the broker has (its commit of 10 and 11 was lost).
    expect(await p.admit([record(10, 'a'), record(11, 'a'), record(12, 'a')], always)).toBe('12');
    await tick();
    expect(gates.started).toEqual(['12']);
    expect(control.commits.at(-1)).toBe('12');
    // Skipping ends at the first record handled, whatever the earlier pipeline finishes later.
    earlier = 20n;
    expect(await p.admit([record(13, 'b')], always)).toBe('13');
    await tick();
    expect(gates.started).toEqual(['12', '13']);
    gates.finish(12);
    gates.finish(13);
    await tick();
    expect(control.commits.at(-1)).toBe('14');
    expect(p.finishedBefore()).toBe(14n);
  });

  it('handles every record when no earlier pipeline finished any', async () => {
    const gates = new Gates();
    const p = pipeline(gates, new Control());
    await p.admit([record(0), record(1)], always);
    await tick();
    expect(gates.started).toEqual(['0', '1']);
    expect(p.finishedBefore()).toBeUndefined();
  });
});
