import { Logger } from '@nestjs/common';
import { Message, Producer, TopicMessages } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { chosenPartitions } from '../internals/partitioner';
import { OutgoingRecord } from '../semantics/records';
import { KafkaUnacknowledgedError, unacknowledgedPartitions } from './unacknowledged';

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
  /**
   * A linger ends early once this many records are queued: a request that full gains
   * little by waiting, and under load records wait for the requests in flight anyway.
   */
  readonly lingerRecords: number;
  /**
   * Produce requests in flight at once, each through its own idempotent producer (kafkajs
   * sends one request at a time per producer and broker). With 1, the default, records are
   * stored in the order of the sends. With more, a send made while others are in flight
   * waits for no one: the records of sends made at the same time may be stored in either
   * order (a send made after another's promise resolved is still stored after it). Worth it
   * where many independent callers wait for their acknowledgement, as HTTP requests do.
   */
  readonly requestsInFlight: number;
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

/** Pause between a renewed producer's attempts to connect. */
const RENEW_RETRY_MS = 1_000;

/**
 * Kafka's answers meaning the broker no longer takes this idempotent producer's records
 * (its id or sequence numbers are out of step, e.g. after a broker restart): fatal to it.
 */
const PRODUCER_ID_LOST = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/** Whether a produce failed for one of {@link PRODUCER_ID_LOST}, however kafkajs wrapped it. */
export function producerIdLost(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; depth += 1) {
    const { type, originalError, cause } = e as Error & { type?: string; originalError?: unknown };
    if (type !== undefined && PRODUCER_ID_LOST.has(type)) return true;
    e = originalError ?? cause;
  }
  return false;
}

const DEFAULTS: BatchProducerOptions = {
  maxBatchRecords: 5_000,
  sendTimeoutMs: 30_000,
  lingerMs: 0,
  lingerRecords: 16,
  requestsInFlight: 1,
};

/**
 * The one way apps produce. Idempotent producers, acks=all. Calls to {@link send} made while
 * a produce request is in flight are gathered into the next request (group commit), so many
 * concurrent callers cost one round trip, never one awaited send per message.
 */
export class BatchProducer {
  private readonly logger = new Logger(BatchProducer.name);
  private readonly options: BatchProducerOptions;
  /** Every producer (one per request in flight), and those not sending now. */
  private producers: Producer[] = [];
  private free: Producer[] = [];
  private queue: Pending[] = [];
  /** Drains running, and whether one is waiting for the rest of the tick before it takes. */
  private readonly drains = new Set<Promise<void>>();
  private starting = false;
  /** Records queued now (the sum over {@link queue}). */
  private queuedRecords = 0;
  /** Ends the lingers under way at once (the queue reached `lingerRecords`). */
  private endLingers: (() => void)[] = [];

  constructor(
    private readonly connection: KafkaConnection,
    options: Partial<BatchProducerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    if (!(this.options.requestsInFlight >= 1)) {
      throw new Error('BatchProducer needs at least one request in flight');
    }
  }

  async connect(): Promise<void> {
    if (this.producers.length === 0) {
      this.producers = Array.from({ length: this.options.requestsInFlight }, () =>
        this.connection.producer(),
      );
      this.free = [...this.producers];
    }
    await Promise.all(this.producers.map((producer) => producer.connect()));
  }

  /** Sends what is queued, then disconnects. */
  async disconnect(): Promise<void> {
    while (this.drains.size > 0) await Promise.all(this.drains);
    const producers = this.producers;
    this.producers = [];
    this.free = [];
    await Promise.all(producers.map((producer) => producer.disconnect()));
  }

  /**
   * Resolves once the brokers acknowledged every record (acks=all), rejects when they did
   * not; records of one call are never split across produce requests unless the call alone
   * exceeds `maxBatchRecords`.
   */
  send(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    if (this.producers.length === 0) {
      return Promise.reject(new Error('BatchProducer is not connected'));
    }
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
      this.queuedRecords += records.length;
      if (this.endLingers.length > 0 && this.queuedRecords >= this.options.lingerRecords) {
        for (const end of this.endLingers.splice(0)) end();
      }
      this.startDrain();
    });
  }

  /** Starts a drain on a free producer, unless one is about to start or none is free. */
  private startDrain(): void {
    if (this.starting || this.free.length === 0) return;
    this.starting = true;
    const drain = this.drain(this.free.pop()!).finally(() => this.drains.delete(drain));
    this.drains.add(drain);
  }

  /** Sends queued calls through `producer`, a request at a time, until the queue is empty. */
  private async drain(producer: Producer): Promise<void> {
    // Let callers of the same tick join the first request.
    await new Promise(setImmediate);
    this.starting = false;
    try {
      while (this.queue.length > 0) {
        await this.linger();
        // Another drain may have taken what was queued while this one lingered.
        const batch = this.takeBatch();
        if (batch.length === 0) continue;
        try {
          await this.produce(
            producer,
            batch.flatMap((p) => p.records),
          );
          for (const pending of batch) pending.resolve();
        } catch (error) {
          this.logger.error(`produce of ${batch.length} call(s) failed: ${String(error)}`);
          for (const pending of batch) pending.reject(error);
          // A send left unanswered may still have been stored: its sequence numbers, rolled
          // back by kafkajs, would make the broker take the next records for a duplicate.
          if (producerIdLost(error) || error instanceof KafkaUnacknowledgedError) {
            producer = await this.renew(producer);
          }
        }
      }
    } finally {
      if (this.producers.includes(producer)) this.free.push(producer);
    }
  }

  /**
   * A new producer (a new producer id) in place of one whose sequence numbers the broker no
   * longer accepts: kafkajs's idempotent producer never recovers from that by itself, and
   * would refuse every later record. Connects it, trying again every second while the
   * broker is away, unless this BatchProducer is being disconnected.
   */
  private async renew(old: Producer): Promise<Producer> {
    const fresh = this.connection.producer();
    const at = this.producers.indexOf(old);
    if (at < 0) return old;
    this.producers[at] = fresh;
    this.logger.warn('a producer was refused for its sequence numbers; a new one replaces it');
    await old.disconnect().catch(() => undefined);
    while (this.producers.includes(fresh)) {
      try {
        await fresh.connect();
        break;
      } catch (error) {
        this.logger.warn(`the new producer could not connect yet: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, RENEW_RETRY_MS));
      }
    }
    return fresh;
  }

  /**
   * Waits until `lingerMs` after the oldest queued send. Without it a sender that queues
   * records one at a time, hundreds a second, would have them produced a few at a time, a
   * request per broker round trip.
   */
  private async linger(): Promise<void> {
    if (this.queue.length === 0 || this.queuedRecords >= this.options.lingerRecords) return;
    const wait = this.queue[0].queuedAt + this.options.lingerMs - performance.now();
    if (wait < 1) return;
    let end = (): void => undefined;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const timer = setTimeout(end, wait);
    this.endLingers.push(end);
    try {
      await ended;
    } finally {
      clearTimeout(timer);
      const at = this.endLingers.indexOf(end);
      if (at >= 0) this.endLingers.splice(at, 1);
    }
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
    this.queuedRecords -= count;
    return this.queue.splice(0, taken);
  }

  /** @throws {KafkaUnacknowledgedError} when kafkajs resolved without every partition's answer */
  private async produce(producer: Producer, records: readonly OutgoingRecord[]): Promise<void> {
    const topicMessages = this.byTopic(records);
    const answers = await producer.sendBatch({ acks: -1, topicMessages });
    const missing = unacknowledgedPartitions(topicMessages, answers, chosenPartitions);
    if (missing.length > 0) throw new KafkaUnacknowledgedError(missing);
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
