import { Logger } from '@nestjs/common';
import { Message, Producer, TopicMessages } from 'kafkajs';

import { KafkaConnection } from './kafka.connection';
import { OutgoingRecord } from './records';

/** Options of a {@link BatchProducer}. */
export interface BatchProducerOptions {
  /** Most records in one produce request; calls larger than this are sent alone. */
  readonly maxBatchRecords: number;
  /** A caller's promise rejects after this long without an acknowledgement. */
  readonly sendTimeoutMs: number;
  /**
   * How long after its first record a request goes out, for later sends to join it; 0 (the
   * default) waits for the rest of the current tick only, and sends made during a request in
   * flight go in the next one at once. Worth a few ms where records are produced one by one at
   * a steady rate and latency matters little: a request costs the same whether it carries one
   * record or fifty.
   */
  readonly lingerMs: number;
}

/** A send that did not receive the brokers' acknowledgement in time. */
export class KafkaSendTimeoutError extends Error {
  readonly code = 'KAFKA_SEND_TIMEOUT';

  constructor(timeoutMs: number) {
    super(`Kafka did not acknowledge the records within ${timeoutMs} ms`);
    this.name = 'KafkaSendTimeoutError';
  }
}

interface Pending {
  readonly records: readonly OutgoingRecord[];
  /** When it was queued (performance.now() ms). */
  readonly queuedAt: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

const DEFAULTS: BatchProducerOptions = {
  maxBatchRecords: 5_000,
  sendTimeoutMs: 30_000,
  lingerMs: 0,
};

/**
 * The one way apps produce. Idempotent producer, acks=all. Calls to {@link send} made while
 * a produce request is in flight are gathered into the next request (group commit), so many
 * concurrent callers cost one round trip, never one awaited send per message.
 */
export class BatchProducer {
  private readonly logger = new Logger(BatchProducer.name);
  private readonly options: BatchProducerOptions;
  private producer?: Producer;
  private queue: Pending[] = [];
  private flushing?: Promise<void>;

  constructor(
    private readonly connection: KafkaConnection,
    options: Partial<BatchProducerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  async connect(): Promise<void> {
    this.producer ??= this.connection.producer();
    await this.producer.connect();
  }

  /** Sends what is queued, then disconnects. */
  async disconnect(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.producer?.disconnect();
    this.producer = undefined;
  }

  /**
   * Resolves once the brokers acknowledged every record (acks=all), rejects when they did
   * not; records of one call are never split across produce requests unless the call alone
   * exceeds `maxBatchRecords`.
   */
  send(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    if (!this.producer) return Promise.reject(new Error('BatchProducer is not connected'));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new KafkaSendTimeoutError(this.options.sendTimeoutMs)),
        this.options.sendTimeoutMs,
      );
      const settle = (fn: () => void) => () => {
        clearTimeout(timer);
        fn();
      };
      this.queue.push({
        records,
        queuedAt: performance.now(),
        resolve: settle(resolve),
        reject: (error) =>
          settle(() => reject(error instanceof Error ? error : new Error(String(error))))(),
      });
      this.flushing ??= this.drain();
    });
  }

  /** Sends queued calls, a request at a time, until the queue is empty. */
  private async drain(): Promise<void> {
    // Let callers of the same tick join the first request.
    await new Promise(setImmediate);
    try {
      while (this.queue.length > 0) {
        await this.linger();
        const batch = this.takeBatch();
        try {
          await this.produce(batch.flatMap((p) => p.records));
          for (const pending of batch) pending.resolve();
        } catch (error) {
          this.logger.error(`produce of ${batch.length} call(s) failed: ${String(error)}`);
          for (const pending of batch) pending.reject(error);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /**
   * Waits until `lingerMs` after the oldest queued send. Without it a sender that queues
   * records one at a time, hundreds a second, would have them produced a few at a time, a
   * request per broker round trip.
   */
  private async linger(): Promise<void> {
    const wait = this.queue[0].queuedAt + this.options.lingerMs - performance.now();
    if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  private takeBatch(): Pending[] {
    let count = 0;
    let taken = 0;
    while (taken < this.queue.length) {
      const size = this.queue[taken].records.length;
      if (taken > 0 && count + size > this.options.maxBatchRecords) break;
      count += size;
      taken += 1;
    }
    return this.queue.splice(0, taken);
  }

  private async produce(records: readonly OutgoingRecord[]): Promise<void> {
    const producer = this.producer;
    if (!producer) throw new Error('BatchProducer is not connected');
    await producer.sendBatch({ acks: -1, topicMessages: this.byTopic(records) });
  }

  private byTopic(records: readonly OutgoingRecord[]): TopicMessages[] {
    const topics = new Map<string, Message[]>();
    for (const record of records) {
      const topic = this.connection.topic(record.topic);
      let messages = topics.get(topic);
      if (!messages) topics.set(topic, (messages = []));
      messages.push({
        key: record.key ?? null,
        value: record.value,
        headers: record.headers,
        partition: record.partition,
      });
    }
    return [...topics].map(([topic, messages]) => ({ topic, messages }));
  }
}
