import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { IncomingRecord } from '../semantics/records';
import { incomingRecord } from './incoming-record';
import { OwnGroupRead, readInOwnGroup } from './own-group-read';

/** The records of one partition to read: from `sinceMs` (record time) on, before `toOffset`. */
export interface PartitionRange {
  readonly partition: number;
  /** The first offset that may be read (an earlier one is never handed over). */
  readonly fromOffset?: bigint;
  /** The first offset not read. */
  readonly toOffset: bigint;
}

/** Options of a {@link RangeReader}. */
export interface RangeReaderOptions {
  /** Longest one read may take, in milliseconds, before it fails. */
  readonly timeoutMs: number;
  /** Longest a fetch waits for records the broker does not have yet, in milliseconds. */
  readonly maxWaitTimeMs: number;
}

const DEFAULTS: RangeReaderOptions = { timeoutMs: 120_000, maxWaitTimeMs: 100 };

/** Where a wanted partition's read is (the next offset wanted) and where it ends. */
interface Span {
  next: bigint;
  readonly to: bigint;
}

/** One read: the topic's name on the cluster and what it wants. */
interface RangePlan {
  readonly name: string;
  readonly spans: Map<number, Span>;
  /** Partitions with nothing wanted, paused from the start. */
  readonly idle: readonly number[];
}

/**
 * Reads spans of a topic's partitions, each from the first record at or after a time (Kafka's
 * offsets-for-times lookup) up to a given offset: what a consumer rebuilds its recent state
 * from when it is assigned a partition. One consumer group of its own per read (deleted after),
 * so one group join however many partitions a read covers.
 */
export class RangeReader {
  private readonly options: RangeReaderOptions;

  constructor(
    private readonly connection: KafkaConnection,
    options: Partial<RangeReaderOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /**
   * Hands the records of `topic` (logical name) in `ranges` whose time is at least `sinceMs` to
   * `onRecords`, a fetched batch at a time, in offset order per partition.
   * @returns how many records were handed over
   * @throws when Kafka fails, `onRecords` throws, or the read exceeds `timeoutMs`
   */
  async read(
    topic: string,
    sinceMs: number,
    ranges: readonly PartitionRange[],
    onRecords: (records: IncomingRecord[]) => void,
  ): Promise<number> {
    const name = this.connection.topic(topic);
    const admin = this.connection.admin();
    await admin.connect();
    try {
      const { spans, idle } = await startingSpans(admin, name, sinceMs, ranges);
      if (spans.size === 0) return 0;
      return await readInOwnGroup(
        this.connection,
        admin,
        name,
        'range',
        this.options,
        (consumer) =>
          new RangeProgress(
            { name, spans, idle },
            (records) =>
              onRecords(records.map((m) => incomingRecord(topic, m.partition, m.message))),
            consumer,
          ),
      );
    } finally {
      await admin.disconnect();
    }
  }
}

/** Each range's first offset at or after `sinceMs` (and its `fromOffset`); empty ones dropped. */
async function startingSpans(
  admin: Admin,
  name: string,
  sinceMs: number,
  ranges: readonly PartitionRange[],
): Promise<{ spans: Map<number, Span>; idle: number[] }> {
  const byTime = await admin.fetchTopicOffsetsByTimestamp(name, sinceMs);
  const spans = new Map<number, Span>();
  for (const range of ranges) {
    const found = byTime.find((entry) => entry.partition === range.partition);
    if (found === undefined) continue;
    const atTime = BigInt(found.offset);
    const next =
      range.fromOffset !== undefined && range.fromOffset > atTime ? range.fromOffset : atTime;
    if (next < range.toOffset) spans.set(range.partition, { next, to: range.toOffset });
  }
  const idle = byTime.map((entry) => entry.partition).filter((p) => !spans.has(p));
  return { spans, idle };
}

type OnMessages = (
  records: { partition: number; message: EachBatchPayload['batch']['messages'][number] }[],
) => void;

/** One read in progress: hands over each batch's records in range, settles once all are read. */
class RangeProgress extends OwnGroupRead {
  constructor(
    private readonly plan: RangePlan,
    private readonly onMessages: OnMessages,
    private readonly consumer: Consumer,
  ) {
    super();
  }

  /** Seeks each wanted partition to its first offset; pauses the others. */
  start(): void {
    const { name, spans, idle } = this.plan;
    if (idle.length > 0) this.consumer.pause([{ topic: name, partitions: [...idle] }]);
    for (const [partition, span] of spans) {
      this.consumer.seek({ topic: name, partition, offset: span.next.toString() });
    }
  }

  async onBatch(payload: EachBatchPayload): Promise<void> {
    const { partition, messages } = payload.batch;
    const { spans } = this.plan;
    const span = spans.get(partition);
    if (this.settled || payload.isStale()) return;
    if (span === undefined || span.next >= span.to) {
      payload.pause();
      return;
    }
    const wanted = messages.filter((m) => {
      const offset = BigInt(m.offset);
      return offset >= span.next && offset < span.to;
    });
    if (wanted.length > 0) {
      this.onMessages(wanted.map((message) => ({ partition, message })));
      this.found += wanted.length;
    }
    const last = messages.length > 0 ? BigInt(messages[messages.length - 1].offset) : undefined;
    if (last !== undefined && last + 1n > span.next) span.next = last + 1n;
    if (span.next >= span.to) {
      payload.pause();
      if ([...spans.values()].every((s) => s.next >= s.to)) this.settle();
      return;
    }
    await payload.heartbeat();
  }
}
