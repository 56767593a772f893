import type {
  Admin,
  Consumer,
  ConsumerConfig,
  IHeaders,
  Kafka,
  Message,
  Producer,
  TopicMessages,
} from 'kafkajs';

import { MemoryConsumer } from './memory-consumer';
import { murmur2 } from './partitioner';

/** The scheme of `KAFKA_BROKERS` that selects a {@link MemoryCluster}: `memory://<name>:0`. */
const MEMORY_SCHEME = /^memory:\/\/([\w.-]+):\d+$/;

/** A record as the cluster keeps it. */
export interface StoredRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders;
  readonly timestamp: number;
}

/** The clusters a process has opened, by name. */
const OPEN = new Map<string, MemoryCluster>();

/**
 * A Kafka cluster in the process's memory, for tests that run the apps without a broker: it
 * makes producers, consumers and admin clients that answer the calls libs/kafka makes of
 * kafkajs's, so the transport, the producer and the topic admin run unchanged on it. One
 * member per group (each consumer of a group is given every partition), no replication, no
 * retention, no transactions: a stand-in for a broker in specs, never a store.
 */
export class MemoryCluster {
  private readonly topics = new Map<string, StoredRecord[][]>();
  /** Committed offsets by group, then `topic:partition`. */
  private readonly committed = new Map<string, Map<string, string>>();
  private readonly consumers = new Set<MemoryConsumer>();

  private constructor(readonly name: string) {}

  /** Opens the cluster `KAFKA_BROKERS=memory://<name>:0` selects in this process. */
  static open(name: string): MemoryCluster {
    if (OPEN.has(name)) throw new Error(`memory cluster ${name} is open already`);
    const cluster = new MemoryCluster(name);
    OPEN.set(name, cluster);
    return cluster;
  }

  /**
   * The open cluster a broker list selects, or undefined for real brokers.
   * @throws {Error} when it names a memory cluster nobody opened (a broker list is never
   *   silently taken for memory)
   */
  static selectedBy(brokers: readonly string[]): MemoryCluster | undefined {
    const name = MEMORY_SCHEME.exec(brokers[0] ?? '')?.[1];
    if (name === undefined) return undefined;
    const cluster = OPEN.get(name);
    if (!cluster) throw new Error(`no memory cluster ${name} is open in this process`);
    return cluster;
  }

  /** Forgets the cluster; its clients must be disconnected first. */
  close(): void {
    OPEN.delete(this.name);
  }

  /** The cluster as kafkajs's client factory, for `KafkaConnection`. */
  asKafka(): Pick<Kafka, 'producer' | 'consumer' | 'admin'> {
    return {
      producer: () => this.producer(),
      consumer: (config) => this.consumer(config) as unknown as Consumer,
      admin: () => this.admin(),
    };
  }

  /** A producer: `sendBatch` appends to the partitions at once, as acknowledged. */
  producer(): Producer {
    return {
      ...idleClient(),
      sendBatch: ({ topicMessages }: { topicMessages?: TopicMessages[] }) =>
        Promise.resolve(
          (topicMessages ?? []).flatMap(({ topic, messages }) =>
            messages.map((message) => this.append(topic, message)),
          ),
        ),
    } as unknown as Producer;
  }

  /** A consumer of one group; see {@link MemoryConsumer}. */
  consumer(config: ConsumerConfig): MemoryConsumer {
    const consumer = new MemoryConsumer(this, config);
    this.consumers.add(consumer);
    return consumer;
  }

  /** An admin client: topics, their offsets, and groups' committed offsets. */
  admin(): Admin {
    return {
      ...idleClient(),
      listTopics: () => Promise.resolve([...this.topics.keys()]),
      createTopics: ({ topics }: { topics: { topic: string; numPartitions?: number }[] }) => {
        for (const { topic, numPartitions } of topics) this.create(topic, numPartitions ?? 1);
        return Promise.resolve(true);
      },
      fetchTopicMetadata: ({ topics }: { topics: string[] }) =>
        Promise.resolve({
          topics: topics.map((name) => ({
            name,
            partitions: this.partitions(name).map((_, partitionId) => ({ partitionId, leader: 0 })),
          })),
        }),
      fetchTopicOffsets: (topic: string) =>
        Promise.resolve(
          this.partitions(topic).map((records, partition) => {
            const high = String(records.length);
            return { partition, offset: high, high, low: '0' };
          }),
        ),
      fetchOffsets: ({ groupId, topics }: { groupId: string; topics: string[] }) =>
        Promise.resolve(
          topics.map((topic) => ({
            topic,
            partitions: this.partitions(topic).map((_, partition) => ({
              partition,
              offset: this.committedOffset(groupId, topic, partition) ?? '-1',
              metadata: null,
            })),
          })),
        ),
      describeCluster: () =>
        Promise.resolve({ brokers: [], controller: null, clusterId: this.name }),
    } as unknown as Admin;
  }

  /** The partitions of a topic; throws for a topic nobody created, as a broker would. */
  partitions(topic: string): StoredRecord[][] {
    const partitions = this.topics.get(topic);
    if (!partitions) throw new Error(`This server does not host this topic-partition: ${topic}`);
    return partitions;
  }

  /** The offset a group committed for a partition (the next record to read), if any. */
  committedOffset(groupId: string, topic: string, partition: number): string | undefined {
    return this.committed.get(groupId)?.get(`${topic}:${partition}`);
  }

  /** Stores a group's offsets. */
  commit(groupId: string, offsets: { topic: string; partition: number; offset: string }[]): void {
    let group = this.committed.get(groupId);
    if (!group) this.committed.set(groupId, (group = new Map<string, string>()));
    for (const { topic, partition, offset } of offsets) group.set(`${topic}:${partition}`, offset);
  }

  /** Forgets a consumer that disconnected. */
  left(consumer: MemoryConsumer): void {
    this.consumers.delete(consumer);
  }

  private create(topic: string, partitions: number): void {
    if (this.topics.has(topic)) return;
    this.topics.set(
      topic,
      Array.from({ length: partitions }, () => []),
    );
  }

  /** Appends a message where kafkajs's partitioner here would put it, and wakes the consumers. */
  private append(
    topic: string,
    message: Message,
  ): { topicName: string; partition: number; errorCode: number } {
    const partitions = this.partitions(topic);
    const partition =
      message.partition ??
      (message.key === null || message.key === undefined
        ? 0
        : (murmur2(message.key) & 0x7fffffff) % partitions.length);
    partitions[partition].push({
      key: toBuffer(message.key),
      value: toBuffer(message.value),
      headers: message.headers ?? {},
      timestamp: Date.now(),
    });
    for (const consumer of this.consumers) consumer.wake();
    return { topicName: topic, partition, errorCode: 0 };
  }
}

/** What every client has: it connects and disconnects at once, and has no events to tell. */
function idleClient(): object {
  return {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    on: () => () => undefined,
    events: { REQUEST: 'memory.request' },
  };
}

function toBuffer(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value) : value;
}
