import { HEADER, TOPIC } from '@app/contracts';
import { IncomingRecord, PartitionRange } from '@app/kafka';
import { Metrics } from '@app/observability';

import { CallHistory, DedupService } from './dedup.service';
import { RouterMetrics } from './router.metrics';

const WINDOW_MS = 600_000;
const SOURCE_ID = 's-1';

function call(
  offset: number,
  messageId: string,
  partition = 0,
  timestamp = 1_000_000,
  user = 'u-1',
): IncomingRecord {
  return {
    topic: TOPIC.calls,
    partition,
    offset: String(offset),
    key: Buffer.from(`${SOURCE_ID}:${user}`),
    value: Buffer.from('{}'),
    headers: {
      [HEADER.sourceId]: Buffer.from(SOURCE_ID),
      [HEADER.messageId]: Buffer.from(messageId),
    },
    timestamp,
  };
}

/** A calls topic in memory: hands over the records in each range, and records the reads. */
class FakeHistory implements CallHistory {
  readonly reads: { sinceMs: number; ranges: readonly PartitionRange[] }[] = [];
  failure?: Error;

  constructor(readonly records: IncomingRecord[] = []) {}

  read(
    sinceMs: number,
    ranges: readonly PartitionRange[],
    onRecords: (records: IncomingRecord[]) => void,
  ): Promise<number> {
    this.reads.push({ sinceMs, ranges });
    if (this.failure) return Promise.reject(this.failure);
    const found = this.records.filter((r) =>
      ranges.some(
        (range) =>
          range.partition === r.partition &&
          BigInt(r.offset) >= (range.fromOffset ?? 0n) &&
          BigInt(r.offset) < range.toOffset &&
          r.timestamp >= sinceMs,
      ),
    );
    onRecords(found);
    return Promise.resolve(found.length);
  }
}

function service(history: CallHistory, windowMs = WINDOW_MS): DedupService {
  return new DedupService(
    { windowMs, seeds: [7, 11] },
    history,
    new RouterMetrics(new Metrics('dedup-spec')),
  );
}

describe(DedupService.name, () => {
  it('reads the partition back from the window before its first record', async () => {
    const history = new FakeHistory([call(3, 'm-a'), call(4, 'm-b')]);
    const dedup = service(history);
    await expect(dedup.check(call(5, 'm-a'))).resolves.toBe('duplicate');
    await expect(dedup.check(call(6, 'm-c'))).resolves.toBe('first');
    expect(history.reads).toEqual([
      {
        sinceMs: 1_000_000 - WINDOW_MS,
        ranges: [{ partition: 0, fromOffset: undefined, toOffset: 5n }],
      },
    ]);
  });

  it('finds a duplicate within one batch of records checked at once', async () => {
    const dedup = service(new FakeHistory());
    const verdicts = await Promise.all([call(0, 'm-a'), call(1, 'm-a')].map((r) => dedup.check(r)));
    expect(verdicts).toEqual(['first', 'duplicate']);
  });

  it("routes two users' calls that share a messageId on one partition, and drops each one's copy", async () => {
    const dedup = service(new FakeHistory());
    const verdicts = await Promise.all(
      [
        call(0, 'm-a', 0, 1_000_000, 'u-1'),
        call(1, 'm-a', 0, 1_000_000, 'u-2'),
        call(2, 'm-a', 0, 1_000_000, 'u-2'),
        call(3, 'm-a', 0, 1_000_000, 'u-1'),
      ].map((r) => dedup.check(r)),
    );
    expect(verdicts).toEqual(['first', 'first', 'duplicate', 'duplicate']);
  });

  it("reads the user of each call read back: another user's earlier call is no duplicate", async () => {
    const history = new FakeHistory([call(3, 'm-a', 0, 1_000_000, 'u-2')]);
    const dedup = service(history);
    await expect(dedup.check(call(4, 'm-a', 0, 1_000_000, 'u-1'))).resolves.toBe('first');
    await expect(dedup.check(call(5, 'm-a', 0, 1_000_000, 'u-2'))).resolves.toBe('duplicate');
  });

  it('reads nothing more after a rebalance that left the partition where it was', async () => {
    const history = new FakeHistory();
    const dedup = service(history);
    await dedup.check(call(5, 'm-a'));
    dedup.rebalanced(new Set([0]));
    await expect(dedup.check(call(6, 'm-a'))).resolves.toBe('duplicate');
    expect(history.reads).toHaveLength(1);
  });

  it('reads the gap another member handled after a rebalance', async () => {
    const history = new FakeHistory([call(6, 'm-b'), call(7, 'm-c')]);
    const dedup = service(history);
    await dedup.check(call(5, 'm-a'));
    dedup.rebalanced(undefined);
    await expect(dedup.check(call(8, 'm-b'))).resolves.toBe('duplicate');
    expect(history.reads[1].ranges).toEqual([{ partition: 0, fromOffset: 6n, toOffset: 8n }]);
  });

  it('forgets a partition no longer assigned and reads it whole when it returns', async () => {
    const history = new FakeHistory();
    const dedup = service(history);
    await dedup.check(call(5, 'm-a', 1));
    dedup.rebalanced(new Set([0]));
    expect(dedup.size).toBe(0);
    dedup.rebalanced(new Set([0, 1]));
    await dedup.check(call(9, 'm-z', 1));
    expect(history.reads[1].ranges).toEqual([
      { partition: 1, fromOffset: undefined, toOffset: 9n },
    ]);
  });

  it('reads nothing for a record of a partition given away (its new owner decides)', async () => {
    const history = new FakeHistory([call(3, 'm-a', 1)]);
    const dedup = service(history);
    dedup.rebalanced(new Set([0]));
    await expect(dedup.check(call(5, 'm-a', 1))).resolves.toBe('first');
    expect(history.reads).toEqual([]);
  });

  it('throws while the read back fails, and reads again on the next try', async () => {
    const history = new FakeHistory([call(3, 'm-a')]);
    history.failure = new Error('broker away');
    const dedup = service(history);
    await expect(dedup.check(call(5, 'm-a'))).rejects.toThrow('broker away');
    history.failure = undefined;
    await expect(dedup.check(call(5, 'm-a'))).resolves.toBe('duplicate');
    expect(history.reads).toHaveLength(2);
  });

  it('reads nothing and routes every copy with the window at 0', async () => {
    const history = new FakeHistory([call(3, 'm-a')]);
    const dedup = service(history, 0);
    await expect(dedup.check(call(5, 'm-a'))).resolves.toBe('first');
    await expect(dedup.check(call(6, 'm-a'))).resolves.toBe('first');
    expect(history.reads).toEqual([]);
  });

  it('lets a call without a message id through (delete notifications)', async () => {
    const dedup = service(new FakeHistory());
    const record = call(5, 'x');
    const headers = { [HEADER.sourceId]: record.headers[HEADER.sourceId] };
    await expect(dedup.check({ ...record, headers })).resolves.toBe('first');
  });
});
