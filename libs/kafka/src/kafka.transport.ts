import { Logger } from '@nestjs/common';
import { BaseRpcContext, CustomTransportStrategy, Server } from '@nestjs/microservices';
import { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { lastValueFrom } from 'rxjs';

import { KafkaConnection } from './kafka.connection';
import { processPartitionBatch } from './partition-batch';
import { IncomingRecord, normalizeHeaders } from './records';

/** Options of the {@link KafkaTransport}. */
export interface KafkaTransportOptions {
  readonly connection: KafkaConnection;
  /** Consumer group; every replica of an app shares one. */
  readonly groupId: string;
  /**
   * The logical topics this transport consumes, each needing a registered handler; by
   * default the pattern of every registered handler. Lets one app run several consumer
   * groups (Nest registers every handler with every transport).
   */
  readonly topics?: readonly string[];
  /** Partitions handled at the same time by this process. */
  readonly partitionsConcurrently: number;
  /** Handler calls in flight per partition (records with one key stay in order). */
  readonly maxInFlightPerPartition: number;
  /** Pause of a partition after a handler threw, before its record is tried again. */
  readonly failureBackoffMs: number;
  /** Header holding a record's due time (epoch ms as text); absent means due at once. */
  readonly dueAtHeader?: string;
  /** Start from the earliest offset when the group has none (default true). */
  readonly fromBeginning?: boolean;
  readonly sessionTimeoutMs?: number;
  /**
   * Longest a fetch waits on the broker for new records (default 500). A resumed partition
   * is fetched again no later than this, so it bounds how late a due record is handled.
   */
  readonly maxWaitTimeMs?: number;
  readonly now?: () => number;
}

/** The context handlers receive beside the record. */
export class RecordContext extends BaseRpcContext<[IncomingRecord]> {
  get record(): IncomingRecord {
    return this.args[0];
  }
}

/**
 * A Nest microservice transport over Kafka: serves `@EventPattern(topic)` handlers (topic =
 * logical name) in batches with bounded concurrency, commits the finished prefix of each
 * batch only, pauses a partition until its head record is due (`dueAtHeader`) and resumes it
 * then, and backs off and retries a record whose handler threw. Connected with
 * `app.connectMicroservice({ strategy: new KafkaTransport(options) })`.
 */
export class KafkaTransport extends Server implements CustomTransportStrategy {
  private readonly log = new Logger(KafkaTransport.name);
  private readonly now: () => number;
  private consumer?: Consumer;
  private closing = false;
  /** Resume timers by `topic:partition`. */
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: KafkaTransportOptions) {
    super();
    this.now = options.now ?? Date.now;
  }

  /** Subscribes to the topic of every registered handler and starts consuming. */
  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      await this.start();
      callback();
    } catch (error) {
      callback(error);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    // disconnect() waits for the batches in flight, whose finished prefixes are committed.
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  on(): never {
    throw new Error('KafkaTransport has no events to listen to');
  }

  unwrap<T>(): T {
    if (!this.consumer) throw new Error('KafkaTransport is not listening');
    return this.consumer as T;
  }

  private async start(): Promise<void> {
    const { connection } = this.options;
    const patterns = this.options.topics ?? [...this.messageHandlers.keys()];
    const missing = patterns.filter((pattern) => !this.messageHandlers.has(pattern));
    if (missing.length > 0)
      throw new Error(`KafkaTransport has no handler for ${missing.join(', ')}`);
    const topics = patterns.map((pattern) => connection.topic(pattern));
    if (topics.length === 0) throw new Error('KafkaTransport has no @EventPattern handlers');
    const consumer = connection.client().consumer({
      groupId: this.options.groupId,
      sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 500,
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer (e.g. after a broker outage) on a timer; once
      // closing, a restart would leave a consumer nobody stops.
      retry: { restartOnFailure: () => Promise.resolve(!this.closing) },
    });
    this.consumer = consumer;
    // After a rebalance, nothing may stay paused by a timer that belonged to the old
    // assignment: resume everything; a head record still not due pauses it again.
    consumer.on(consumer.events.GROUP_JOIN, () => this.resumeAll());
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: this.options.fromBeginning ?? true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsConcurrently,
      eachBatch: (payload) => this.handleBatch(payload),
    });
    this.log.log(`consuming ${topics.join(', ')} as group ${this.options.groupId}`);
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const consumer = this.consumer;
    const logical = this.options.connection.logicalTopic(batch.topic);
    const handler = logical === undefined ? null : this.getHandlerByPattern(logical);
    if (logical !== undefined && this.options.topics && !this.options.topics.includes(logical))
      return;
    if (!consumer || logical === undefined || !handler) return;
    const records = batch.messages.map((m) => toRecord(logical, batch.partition, m));
    const outcome = await processPartitionBatch(
      records,
      async (record) => {
        const result: unknown = await handler(record, new RecordContext([record]));
        await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
      },
      {
        maxInFlight: this.options.maxInFlightPerPartition,
        dueAt: (record) => this.dueAt(record),
        now: this.now,
        onProgress: () => payload.heartbeat(),
      },
    );
    const { topic, partition } = batch;
    if (outcome.lastFinished !== null) {
      payload.resolveOffset(outcome.lastFinished);
      const next = (BigInt(outcome.lastFinished) + 1n).toString();
      await consumer.commitOffsets([{ topic, partition, offset: next }]);
    }
    const stop = outcome.stop;
    if (!stop) return;
    if (stop.kind === 'failed') {
      this.log.error(
        `handler failed on ${topic}[${partition}]@${stop.offset}; retrying in ${this.options.failureBackoffMs} ms: ${describe(stop.error)}`,
      );
    }
    const resumeAt =
      stop.kind === 'not-due' ? stop.dueAt : this.now() + this.options.failureBackoffMs;
    this.pauseUntil(topic, partition, stop.offset, resumeAt);
  }

  /** Pauses a partition, rewinds it to `offset`, and resumes it at `resumeAt`. */
  private pauseUntil(topic: string, partition: number, offset: string, resumeAt: number): void {
    const consumer = this.consumer;
    if (!consumer) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    consumer.seek({ topic, partition, offset });
    const key = `${topic}:${partition}`;
    clearTimeout(this.resumeTimers.get(key));
    const delayMs = Math.max(0, resumeAt - this.now());
    const timer = setTimeout(() => {
      this.resumeTimers.delete(key);
      this.consumer?.resume([{ topic, partitions: [partition] }]);
    }, delayMs);
    this.resumeTimers.set(key, timer);
  }

  private resumeAll(): void {
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    const paused = this.consumer?.paused() ?? [];
    if (paused.length > 0) this.consumer?.resume(paused);
  }

  private dueAt(record: IncomingRecord): number | undefined {
    const header = this.options.dueAtHeader;
    const raw = header ? record.headers[header]?.toString('utf8') : undefined;
    if (raw === undefined) return undefined;
    const dueAt = Number(raw);
    // A malformed due time must not stall a partition: treat it as due now.
    return Number.isFinite(dueAt) ? dueAt : undefined;
  }
}

function toRecord(topic: string, partition: number, message: KafkaMessage): IncomingRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: normalizeHeaders(message.headers),
    timestamp: Number(message.timestamp),
  };
}

/** Nest hands handler errors back as plain `{ status, message }` objects. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
}
