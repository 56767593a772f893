import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { IncomingRecord } from '../semantics/records';
import { incomingRecord } from './incoming-record';
import { OwnGroupRead, readInOwnGroup } from './own-group-read';

/** Where a record is on its topic. */
export interface RecordPosition {
  readonly partition: number;
  /** Kafka offsets are 64-bit; kept as decimal strings. */
  readonly offset: string;
}

/** Options of a {@link RecordReader}. */
export interface RecordReaderOptions {
  /** Longest one read may take, in milliseconds, before it fails. */
  readonly timeoutMs: number;
  /** Longest a fetch waits for records the broker does not have yet, in milliseconds. */
  readonly maxWaitTimeMs: number;
}

/** What a read came to. */
export interface RecordReadSummary {
  /** Records handed to the callback. */
  readonly found: number;
  /** Positions with no record: removed by retention, or past the end of the partition. */
  readonly missing: RecordPosition[];
}

/** One read: the topic's name on the cluster and what it wants. */
interface ReadPlan {
  readonly name: string;
  readonly wants: Map<number, PartitionWants>;
  /** Partitions with nothing wanted, paused from the start. */
  readonly idle: readonly number[];
  /** Wanted positions found to have no record; the read adds to it. */
  readonly missing: RecordPosition[];
}

const DEFAULTS: RecordReaderOptions = { timeoutMs: 60_000, maxWaitTimeMs: 100 };

/**
 * The offsets still wanted on one partition, lowest first. Fed contiguous runs of the
 * partition's records (what a fetch returns): a wanted offset the run passes without a record
 * there has none (removed by retention).
 */
export class PartitionWants {
  private readonly offsets: bigint[];
  private index = 0;

  constructor(offsets: Iterable<bigint>) {
    this.offsets = [...new Set(offsets)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  get done(): boolean {
    return this.index >= this.offsets.length;
  }

  /** The lowest offset still wanted. */
  get next(): bigint | undefined {
    return this.offsets[this.index];
  }

  /** Drops the wanted offsets below `low` (the partition's first offset); returns them. */
  dropBelow(low: bigint): bigint[] {
    return this.takeWhile((offset) => offset < low);
  }

  /** Drops the wanted offsets at or past `high` (the partition's end); returns them. */
  dropFrom(high: bigint): bigint[] {
    const dropped = this.offsets.filter((offset, i) => i >= this.index && offset >= high);
    this.offsets.splice(this.offsets.length - dropped.length);
    return dropped;
  }

  /**
   * Takes a run of records in offset order: returns the indexes of those wanted, and the
   * wanted offsets the run passed without a record (missing).
   */
  take(offsets: readonly bigint[]): { wanted: number[]; missing: bigint[] } {
    const wanted: number[] = [];
    const missing: bigint[] = [];
    offsets.forEach((offset, i) => {
      missing.push(...this.takeWhile((next) => next < offset));
      if (this.next === offset) {
        wanted.push(i);
        this.index += 1;
      }
    });
    return { wanted, missing };
  }

  private takeWhile(test: (offset: bigint) => boolean): bigint[] {
    const taken: bigint[] = [];
    while (!this.done && test(this.offsets[this.index])) taken.push(this.offsets[this.index++]);
    return taken;
  }
}

/**
 * Reads records at given positions of a topic (a dead letter a ledger row points at), for
 * apps that must not import the Kafka client. Each read joins a consumer group of its own
 * (deleted afterwards), seeks each partition to its first wanted offset, skips ahead over
 * gaps between wanted offsets, and stops once every position is found or known missing: one
 * group join per read however many positions it has.
 */
export class RecordReader {
  private readonly options: RecordReaderOptions;

  constructor(
    private readonly connection: KafkaConnection,
    options: Partial<RecordReaderOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /**
   * Reads the records of `topic` (logical name) at `positions`, handing them to `onRecords`
   * a fetched batch at a time (awaited before the next: memory stays bounded however many
   * positions are read). Rejects when `onRecords` throws, Kafka fails, or the read takes
   * longer than `timeoutMs`.
   */
  async read(
    topic: string,
    positions: readonly RecordPosition[],
    onRecords: (records: IncomingRecord[]) => Promise<void>,
  ): Promise<RecordReadSummary> {
    const name = this.connection.topic(topic);
    const admin = this.connection.admin();
    await admin.connect();
    try {
      const missing: RecordPosition[] = [];
      const ends = await admin.fetchTopicOffsets(name);
      const wants = partitionWants(ends, positions, missing);
      if (wants.size === 0) return { found: 0, missing };
      const idle = ends.map((e) => e.partition).filter((partition) => !wants.has(partition));
      const plan = { name, wants, idle, missing };
      const found = await readInOwnGroup(
        this.connection,
        admin,
        name,
        'reader',
        this.options,
        (consumer) =>
          new ReadProgress(
            plan,
            (records) =>
              onRecords(records.map((m) => incomingRecord(topic, m.partition, m.message))),
            consumer,
          ),
      );
      return { found, missing };
    } finally {
      await admin.disconnect();
    }
  }
}

/** The wanted offsets per partition that can be on the topic now; the others are missing. */
function partitionWants(
  ends: readonly { partition: number; low: string; high: string }[],
  positions: readonly RecordPosition[],
  missing: RecordPosition[],
): Map<number, PartitionWants> {
  const byPartition = new Map<number, bigint[]>();
  for (const { partition, offset } of positions) {
    const list = byPartition.get(partition) ?? [];
    list.push(BigInt(offset));
    byPartition.set(partition, list);
  }
  const endOf = new Map(ends.map((e) => [e.partition, e]));
  const wants = new Map<number, PartitionWants>();
  for (const [partition, offsets] of byPartition) {
    const want = new PartitionWants(offsets);
    const end = endOf.get(partition);
    const gone = end
      ? [...want.dropBelow(BigInt(end.low)), ...want.dropFrom(BigInt(end.high))]
      : want.dropFrom(0n);
    missing.push(...gone.map((offset) => ({ partition, offset: offset.toString() })));
    if (!want.done) wants.set(partition, want);
  }
  return wants;
}

type OnMessages = (records: { partition: number; message: KafkaMessage }[]) => Promise<void>;

/** One read in progress: hands over the wanted records of each batch, settles once done. */
class ReadProgress extends OwnGroupRead {
  constructor(
    private readonly plan: ReadPlan,
    private readonly onRecords: OnMessages,
    private readonly consumer: Consumer,
  ) {
    super();
  }

  /** Seeks each wanted partition to its first wanted offset and pauses the others. */
  start(): void {
    const { name, wants, idle } = this.plan;
    if (idle.length > 0) this.consumer.pause([{ topic: name, partitions: [...idle] }]);
    for (const [partition, want] of wants) {
      this.consumer.seek({ topic: name, partition, offset: want.next!.toString() });
    }
  }

  async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { name, wants, missing } = this.plan;
    const { partition, messages } = batch;
    const want = wants.get(partition);
    if (this.settled || payload.isStale() || !want || want.done) return;
    const taken = want.take(messages.map((m) => BigInt(m.offset)));
    missing.push(...taken.missing.map((offset) => ({ partition, offset: offset.toString() })));
    if (taken.wanted.length > 0) {
      await this.onRecords(taken.wanted.map((i) => ({ partition, message: messages[i] })));
      this.found += taken.wanted.length;
    }
    if (want.done) {
      payload.pause();
      if ([...wants.values()].every((w) => w.done)) this.settle();
      return;
    }
    // Skip the records between this batch and the next wanted offset rather than fetch them.
    const next = want.next!;
    if (next > BigInt(messages[messages.length - 1].offset) + 1n) {
      this.consumer.seek({ topic: name, partition, offset: next.toString() });
    }
    await payload.heartbeat();
  }
}
