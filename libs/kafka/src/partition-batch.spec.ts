import { processPartitionBatch } from './partition-batch';
import { IncomingRecord } from './records';

function record(offset: number, key: string | null, dueAt?: number): IncomingRecord {
  return {
    topic: 't',
    partition: 0,
    offset: String(offset),
    key: key === null ? null : Buffer.from(key),
    value: Buffer.from(`v${offset}`),
    headers: dueAt === undefined ? {} : { due: Buffer.from(String(dueAt)) },
    timestamp: 0,
  };
}

const NOW = 1_000_000;
const options = {
  maxInFlight: 3,
  now: () => NOW,
  dueAt: (r: IncomingRecord) => (r.headers.due ? Number(r.headers.due.toString()) : undefined),
};

/** A handler whose calls finish when the test says so. */
function controlledHandler() {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  const handle = (r: IncomingRecord) =>
    new Promise<void>((resolve) => {
      started.push(r.offset);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      finishers.set(r.offset, () => {
        inFlight -= 1;
        resolve();
      });
    });
  const finish = (offset: string) => finishers.get(offset)!();
  return { handle, started, finish, maxInFlight: () => maxInFlight };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(processPartitionBatch.name, () => {
  it('finishes a whole batch and reports its last offset', async () => {
    const seen: string[] = [];
    const outcome = await processPartitionBatch(
      [record(5, 'a'), record(6, 'b'), record(7, null)],
      async (r) => void seen.push(r.offset),
      options,
    );
    expect(outcome).toEqual({ lastFinished: '7' });
    expect(seen.sort()).toEqual(['5', '6', '7']);
  });

  it('keeps the order of records that share a key and bounds concurrency', async () => {
    const h = controlledHandler();
    const records = [
      record(0, 'a'),
      record(1, 'a'),
      record(2, 'b'),
      record(3, 'c'),
      record(4, 'd'),
    ];
    const done = processPartitionBatch(records, h.handle, options);
    await tick();
    // '1' waits for '0' (same key); three slots go to 0, 2, 3.
    expect(h.started).toEqual(['0', '2', '3']);
    h.finish('0');
    h.finish('2');
    for (let i = 0; i < 5; i += 1) await tick();
    expect([...h.started].sort()).toEqual(['0', '1', '2', '3', '4']);
    for (const offset of ['1', '3', '4']) h.finish(offset);
    await expect(done).resolves.toEqual({ lastFinished: '4' });
    expect(h.maxInFlight()).toBeLessThanOrEqual(3);
    expect(h.started.indexOf('1')).toBeGreaterThan(h.started.indexOf('0'));
  });

  it('commits only the finished prefix when a handler throws', async () => {
    const outcome = await processPartitionBatch(
      [record(10, 'a'), record(11, 'b'), record(12, 'c')],
      async (r) => {
        if (r.offset === '11') throw new Error('down');
      },
      options,
    );
    expect(outcome.lastFinished).toBe('10');
    expect(outcome.stop).toMatchObject({ kind: 'failed', offset: '11' });
  });

  it('reports nothing finished when the first record fails', async () => {
    const outcome = await processPartitionBatch(
      [record(3, 'a'), record(4, 'b')],
      async () => {
        throw new Error('down');
      },
      options,
    );
    expect(outcome.lastFinished).toBeNull();
    expect(outcome.stop).toMatchObject({ kind: 'failed', offset: '3' });
  });

  it('stops at the first record that is not due and handles none after it', async () => {
    const seen: string[] = [];
    const outcome = await processPartitionBatch(
      [record(1, 'a', NOW - 1), record(2, 'b', NOW + 5_000), record(3, 'c')],
      async (r) => void seen.push(r.offset),
      options,
    );
    expect(seen).toEqual(['1']);
    expect(outcome).toEqual({
      lastFinished: '1',
      stop: { kind: 'not-due', offset: '2', dueAt: NOW + 5_000 },
    });
  });
});
