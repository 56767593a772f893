import type { ConsumerConfig, EachBatchPayload, KafkaMessage, TopicPartitions } from 'kafkajs';

import type { MemoryCluster } from './memory-cluster';

/** Most records handed over in one batch. */
const MAX_BATCH_RECORDS = 500;
/** Longest an idle consumer waits before it looks again (a produce, resume or seek wakes it). */
const IDLE_WAIT_MS = 100;

type Listener = (event: { payload: unknown }) => void;

/**
 * A consumer of a {@link MemoryCluster} with kafkajs's batch API as libs/kafka uses it: it is
 * given every partition of its topics (it joins at `run`, from the group's committed offsets,
 * else from the start), hands each partition's new records to `eachBatch` one partition at a
 * time, and fetches on from the last offset resolved, or from a seek made meanwhile. Paused
 * partitions are skipped until resumed.
 */
export class MemoryConsumer {
  readonly events = {
    GROUP_JOIN: 'consumer.group_join',
    CRASH: 'consumer.crash',
    REQUEST: 'consumer.network.request',
  } as const;
  private readonly listeners = new Map<string, Listener[]>();
  private topics: string[] = [];
  private fromBeginning = true;
  /** The next offset to fetch, by `topic:partition`. */
  private readonly positions = new Map<string, bigint>();
  private readonly seeks = new Map<string, bigint>();
  /** Paused `topic:partition`s, and `topic:*` for a whole topic. */
  private readonly pausedKeys = new Set<string>();
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;

  constructor(
    private readonly cluster: MemoryCluster,
    private readonly config: ConsumerConfig,
  ) {}

  on(event: string, listener: Listener): () => void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return () => undefined;
  }

  connect(): Promise<void> {
    return Promise.resolve();
  }

  subscribe({
    topics,
    fromBeginning,
  }: {
    topics: string[];
    fromBeginning?: boolean;
  }): Promise<void> {
    this.topics = topics;
    this.fromBeginning = fromBeginning ?? false;
    return Promise.resolve();
  }

  run({ eachBatch }: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> {
    this.running = true;
    this.join();
    this.loop = this.consume(eachBatch);
    return Promise.resolve();
  }

  async disconnect(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.cluster.left(this);
  }

  pause(topics: { topic: string; partitions?: number[] }[]): void {
    for (const { topic, partitions } of topics) {
      for (const key of partitions?.map((p) => `${topic}:${p}`) ?? [`${topic}:*`]) {
        this.pausedKeys.add(key);
      }
    }
  }

  resume(topics: { topic: string; partitions?: number[] }[]): void {
    for (const { topic, partitions } of topics) {
      if (partitions === undefined) {
        for (const key of [...this.pausedKeys])
          if (key.startsWith(`${topic}:`)) this.pausedKeys.delete(key);
      } else {
        for (const p of partitions) this.pausedKeys.delete(`${topic}:${p}`);
      }
    }
    this.wake();
  }

  paused(): TopicPartitions[] {
    const byTopic = new Map<string, number[]>();
    for (const [topic, partition] of this.assigned()) {
      if (!this.isPaused(topic, partition)) continue;
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
    }
    return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
  }

  seek({ topic, partition, offset }: { topic: string; partition: number; offset: string }): void {
    this.seeks.set(`${topic}:${partition}`, BigInt(offset));
    this.wake();
  }

  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void> {
    this.cluster.commit(this.config.groupId, offsets);
    return Promise.resolve();
  }

  /** Looks for new records now (the cluster calls it after every produce). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Takes every partition of the subscribed topics, from the group's committed offsets. */
  private join(): void {
    const memberAssignment: Record<string, number[]> = {};
    for (const topic of this.topics) {
      const partitions = this.cluster.partitions(topic);
      memberAssignment[topic] = partitions.map((_, p) => p);
      partitions.forEach((records, partition) => {
        const committed = this.cluster.committedOffset(this.config.groupId, topic, partition);
        const start = this.fromBeginning ? 0 : records.length;
        this.positions.set(`${topic}:${partition}`, BigInt(committed ?? start));
      });
    }
    for (const listener of this.listeners.get(this.events.GROUP_JOIN) ?? []) {
      listener({ payload: { groupId: this.config.groupId, memberAssignment } });
    }
  }

  private async consume(eachBatch: (payload: EachBatchPayload) => Promise<void>): Promise<void> {
    while (this.running) {
      let moved = false;
      for (const [topic, partition] of this.assigned()) {
        if (this.running) moved = (await this.fetch(topic, partition, eachBatch)) || moved;
      }
      if (!moved && this.running) await this.idle();
    }
  }

  /** Hands a partition's new records over; whether its position moved. */
  private async fetch(
    topic: string,
    partition: number,
    eachBatch: (payload: EachBatchPayload) => Promise<void>,
  ): Promise<boolean> {
    const key = `${topic}:${partition}`;
    const before = this.position(key);
    if (this.isPaused(topic, partition)) return before !== this.positions.get(key);
    const records = this.cluster.partitions(topic)[partition];
    if (before >= BigInt(records.length)) return false;
    const first = Number(before);
    const messages = records
      .slice(first, first + MAX_BATCH_RECORDS)
      .map((record, i): KafkaMessage => ({
        offset: String(first + i),
        key: record.key,
        value: record.value,
        headers: record.headers,
        timestamp: String(record.timestamp),
        attributes: 0,
      }));
    let resolved: bigint | undefined;
    const lastOffset = first + messages.length - 1;
    const payload = {
      batch: {
        topic,
        partition,
        messages,
        highWatermark: String(records.length),
        offsetLag: () => String(records.length - 1 - lastOffset),
      },
      resolveOffset: (offset: string) => (resolved = BigInt(offset)),
      isRunning: () => this.running,
      isStale: () => this.seeks.has(key),
      heartbeat: () => Promise.resolve(),
    } as unknown as EachBatchPayload;
    await eachBatch(payload);
    if (!this.seeks.has(key) && resolved !== undefined) this.positions.set(key, resolved + 1n);
    return this.position(key) !== before;
  }

  /** The partition's next offset, a seek made since applied. */
  private position(key: string): bigint {
    const seek = this.seeks.get(key);
    if (seek !== undefined) {
      this.seeks.delete(key);
      this.positions.set(key, seek);
    }
    return this.positions.get(key) ?? 0n;
  }

  private isPaused(topic: string, partition: number): boolean {
    return this.pausedKeys.has(`${topic}:*`) || this.pausedKeys.has(`${topic}:${partition}`);
  }

  private *assigned(): Generator<[string, number]> {
    for (const topic of this.topics) {
      const count = this.cluster.partitions(topic).length;
      for (let partition = 0; partition < count; partition += 1) yield [topic, partition];
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, IDLE_WAIT_MS);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
