import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import { Consumer, ConsumerCrashEvent, EachBatchPayload } from 'kafkajs';

import { ConsumerHealth, ConsumerState, ConsumerStatus } from './consumer-health';
import { KafkaConnection } from './kafka.connection';
import { OffsetCommits } from './offset-commits';
import { PartitionPipeline, PipelineHandler } from './partition-pipeline';
import { IncomingRecord, incomingRecord } from './records';

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
  /**
   * How long the group waits for a member that stopped heartbeating before it hands its
   * partitions to others (default 8 s): what a killed member costs the group.
   */
  readonly sessionTimeoutMs?: number;
  /** How often a member heartbeats (default 1 s); at most a third of the session timeout. */
  readonly heartbeatIntervalMs?: number;
  /** How long a rebalance waits for the members to join again (default 30 s). */
  readonly rebalanceTimeoutMs?: number;
  /**
   * Longest a close waits for the records in flight to finish (default 10 s) before it commits
   * what finished and leaves the group anyway; keep it under the app's shutdown timeout.
   */
  readonly closeTimeoutMs?: number;
  /** Where this consumer reports its state, for readiness. */
  readonly health?: ConsumerHealth;
  /**
   * Longest a fetch waits on the broker for new records (default 500). A resumed partition
   * is fetched again no later than this, so it bounds how late a due record is handled.
   */
  readonly maxWaitTimeMs?: number;
  /**
   * Most bytes one fetch brings of a partition (default kafkajs's 1 MiB; a larger first
   * record batch still comes whole). Fetched records wait decoded until a slot takes them, and
   * the consumer fetches again only once they were all admitted, so a fetch much larger than
   * the partition's slots hold keeps thousands of records alive for nothing.
   */
  readonly maxBytesPerPartition?: number;
  /**
   * After a fetch that brought a partition's last records (nothing more to read), the next
   * fetch waits until this long after it (default 0: at once), so records that arrive
   * meanwhile come in one fetch. For consumers nobody waits on by the millisecond, at a
   * moderate rate: every fetch, commit and handler batch costs the same whether it carries one
   * record or a hundred. A consumer with a backlog fetches without waiting, and a first record
   * after a quiet spell comes at once (the fetch waits on the broker for it).
   */
  readonly fetchLingerMs?: number;
  readonly now?: () => number;
}

/**
 * Longest a fetched batch waits for a free slot of its partition before the partition is held
 * (paused and rewound) until one frees. Short, because the consumer fetches again from a
 * broker only after every batch of the last fetch was handed over; long enough that a busy
 * partition keeps flowing without pause-and-refetch round trips.
 */
const ADMISSION_WAIT_MS = 1_000;

/**
 * How long finished offsets gather before they are committed, all partitions in one request
 * ({@link OffsetCommits}): a crash replays at most about this much more. Shorter cost a
 * commit request every few dozen calls at a moderate rate (bench/PIPELINE.md).
 */
const COMMIT_GATHER_MS = 200;

/** Consumer defaults ({@link KafkaTransportOptions}); docs/operations.md explains the choice. */
const DEFAULT_SESSION_TIMEOUT_MS = 8_000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000;
const DEFAULT_REBALANCE_TIMEOUT_MS = 30_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/**
 * Pause before the transport makes a new consumer after one crashed for good (kafkajs
 * restarts a consumer itself only after a retriable error).
 */
const RECREATE_DELAY_MS = 5_000;

/** A refused commit is tried again after this long, doubling up to the maximum. */
const COMMIT_RETRY_MS = 1_000;
const COMMIT_RETRY_MAX_MS = 30_000;

/**
 * Handles one record; resolves once everything the record caused is durable, or answers
 * {@link DurableLater} to free the record's slot before that (its offset waits).
 */
export type RecordHandler = PipelineHandler;

/**
 * A Nest microservice transport over Kafka: serves the handlers given to {@link consume}
 * (topic = logical name) in batches with bounded concurrency, commits the finished prefix of
 * each batch only, pauses a partition until its head record is due (`dueAtHeader`) and
 * resumes it then, and backs off and retries a record whose handler threw. Connected with
 * `app.connectMicroservice({ strategy: new KafkaTransport(options) })`, so it starts and
 * stops with the app.
 *
 * Handlers are registered on a transport explicitly, not as `@EventPattern` methods: Nest
 * registers every `@EventPattern` with every transport of an app (one app here may run
 * several consumer groups, even on one topic), and its RPC proxy wraps each call in pipes,
 * interceptors and an exception filter (several promises per record) that nothing here uses.
 */
export class KafkaTransport extends Server implements CustomTransportStrategy {
  private readonly log = new Logger(KafkaTransport.name);
  private readonly now: () => number;
  private consumer?: Consumer;
  /** Set by {@link close}: nothing more is admitted, paused or resumed; commits still go. */
  private closing = false;
  private state: ConsumerState = 'joining';
  /** A new consumer due after one crashed for good. */
  private recreateTimer?: NodeJS.Timeout;
  /** The subscribed topics, prefixed. */
  private subscribed: string[] = [];
  /** Resume timers by `topic:partition`. */
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  /** The pipelines of the current assignment by `topic:partition`; a rebalance starts anew. */
  private pipelines = new Map<string, PartitionPipeline>();
  /** Every pipeline that may still have records in flight, for a draining close. */
  private readonly live = new Set<PartitionPipeline>();
  /** Bumped by every rebalance: an older pipeline no longer pauses or rewinds its partition. */
  private generation = 0;
  /** When the linger after the last fetch that caught up ends; its other batches wait as long. */
  private lingerUntil = 0;
  /** The partitions' finished offsets, committed together. */
  private readonly commits = new OffsetCommits(
    (offsets) => this.consumer?.commitOffsets(offsets) ?? Promise.resolve(),
    COMMIT_GATHER_MS,
    {
      firstMs: COMMIT_RETRY_MS,
      maxMs: COMMIT_RETRY_MAX_MS,
      failed: (error, offsets) =>
        this.log.warn(
          `commit of ${offsets.length} partition(s) refused again: ${describe(error)}; retrying`,
        ),
    },
  );

  constructor(private readonly options: KafkaTransportOptions) {
    super();
    this.now = options.now ?? Date.now;
    options.health?.track(() => this.consumerStatus());
  }

  /** Registers the handler of one logical topic; call before the app starts. */
  consume(topic: string, handler: RecordHandler): void {
    this.addHandler(topic, handler, true);
  }

  /** The consumer's group and where it is in its life (readiness asks). */
  consumerStatus(): ConsumerStatus {
    return { groupId: this.options.groupId, state: this.state };
  }

  /**
   * Connects and subscribes (an unreachable broker fails start-up, as before), then joins the
   * group in the background: the app's HTTP server must not wait for a join, which takes up to
   * a session timeout when a killed member of the group has not expired yet. {@link consumerStatus}
   * says `joining` until it has joined.
   */
  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      const consumer = await this.connect();
      void this.run(consumer);
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /**
   * Stops fetching, lets the records in flight finish (for `closeTimeoutMs` at most), commits
   * what finished, then disconnects, which leaves the group: its partitions go to another
   * member at once, from the committed offsets.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.recreateTimer);
    this.commits.stopRetrying();
    for (const timer of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
    const consumer = this.consumer;
    try {
      this.safely('pause before closing', () =>
        consumer?.pause(this.subscribed.map((topic) => ({ topic }))),
      );
      const drained = await within(
        this.options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS,
        Promise.all([...this.live].map((pipeline) => pipeline.drain())),
      );
      if (!drained) {
        this.log.warn(
          `records still in flight after ${this.options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS} ms; committing what finished and leaving`,
        );
      }
      await this.commits.flush();
    } finally {
      this.state = 'stopped';
      // Leaves the group; also stops a restart kafkajs may have scheduled after a crash.
      await consumer?.disconnect();
      this.consumer = undefined;
      this.log.log(`group ${this.options.groupId} left`);
    }
  }

  on(): never {
    throw new Error('KafkaTransport has no events to listen to');
  }

  unwrap<T>(): T {
    if (!this.consumer) throw new Error('KafkaTransport is not listening');
    return this.consumer as T;
  }

  /** Makes the consumer, connects it and subscribes it to the handlers' topics. */
  private async connect(): Promise<Consumer> {
    const { connection } = this.options;
    const patterns = this.options.topics ?? [...this.messageHandlers.keys()];
    const missing = patterns.filter((pattern) => !this.messageHandlers.has(pattern));
    if (missing.length > 0)
      throw new Error(`KafkaTransport has no handler for ${missing.join(', ')}`);
    const topics = patterns.map((pattern) => connection.topic(pattern));
    this.subscribed = topics;
    if (topics.length === 0) throw new Error('KafkaTransport has no handlers (see consume)');
    const consumer = connection.consumer({
      groupId: this.options.groupId,
      sessionTimeout: this.options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
      heartbeatInterval: this.options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeout: this.options.rebalanceTimeoutMs ?? DEFAULT_REBALANCE_TIMEOUT_MS,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 500,
      maxBytesPerPartition: this.options.maxBytesPerPartition,
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer (e.g. after a broker outage) on a timer; once
      // closing, a restart would leave a consumer nobody stops.
      retry: { restartOnFailure: () => Promise.resolve(!this.closing) },
    });
    this.consumer = consumer;
    this.state = 'joining';
    // After a rebalance, nothing may stay paused by a timer that belonged to the old
    // assignment: resume everything; a head record still not due pauses it again.
    consumer.on(consumer.events.GROUP_JOIN, () => this.rejoined());
    consumer.on(consumer.events.CRASH, (event) => this.crashed(consumer, event));
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: this.options.fromBeginning ?? true });
    return consumer;
  }

  /** Joins the group and consumes; a failure to join is a crash, restarted by kafkajs. */
  private async run(consumer: Consumer): Promise<void> {
    try {
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.partitionsConcurrently,
        eachBatch: (payload) => this.handleBatch(payload),
      });
      if (this.state === 'consuming') {
        this.log.log(`consuming ${this.subscribed.join(', ')} as group ${this.options.groupId}`);
      }
    } catch (error) {
      this.log.error(`consumer of group ${this.options.groupId} failed to run: ${describe(error)}`);
      this.recreateLater(consumer);
    }
  }

  /**
   * kafkajs's consumer crashed: it restarts itself after a retriable error (not consuming until
   * it joins again); after any other, it stays stopped, so a new consumer is made after a pause
   * rather than leaving the app up without consuming.
   */
  private crashed(consumer: Consumer, event: ConsumerCrashEvent): void {
    if (this.closing || consumer !== this.consumer) return;
    this.state = 'restarting';
    if (event.payload.restart) return;
    this.log.error(
      `consumer of group ${this.options.groupId} stopped on ${describe(event.payload.error)}; a new one in ${RECREATE_DELAY_MS} ms`,
    );
    this.recreateLater(consumer);
  }

  /** Disconnects a consumer that gave up and makes a new one after {@link RECREATE_DELAY_MS}. */
  private recreateLater(consumer: Consumer): void {
    if (this.closing) return;
    this.state = 'restarting';
    clearTimeout(this.recreateTimer);
    this.recreateTimer = setTimeout(() => {
      void (async () => {
        try {
          await consumer.disconnect();
          if (this.closing) return;
          const fresh = await this.connect();
          void this.run(fresh);
        } catch (error) {
          this.log.error(`new consumer of group ${this.options.groupId}: ${describe(error)}`);
          this.recreateLater(this.consumer ?? consumer);
        }
      })();
    }, RECREATE_DELAY_MS);
  }

  /** Admits a fetched batch; waits briefly for slots (a partition full for longer is held). */
  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const logical = this.options.connection.logicalTopic(batch.topic);
    // Not Nest's getHandlerByPattern: it first tries the pattern as JSON, and the SyntaxError a
    // topic name throws cost more than the rest of a small batch's admission.
    const handler = logical === undefined ? undefined : this.messageHandlers.get(logical);
    if (logical !== undefined && this.options.topics && !this.options.topics.includes(logical))
      return;
    if (!this.consumer || logical === undefined || !handler || this.closing) return;
    // The handlers are the ones given to `consume`: they take the record alone.
    const pipeline = this.pipeline(batch.topic, batch.partition, handler);
    const records = batch.messages.map((m) => incomingRecord(logical, batch.partition, m));
    const generation = this.generation;
    const last = await pipeline.admit(
      records,
      () =>
        payload.isRunning() &&
        !payload.isStale() &&
        !this.closing &&
        generation === this.generation,
    );
    // Fetching goes on after the last record admitted, while earlier ones are still in flight;
    // a batch of an older generation leaves the new one's fetch position alone.
    if (last !== undefined && generation === this.generation) payload.resolveOffset(last);
    // Caught up with the partition: what comes next comes a little at a time.
    if (this.options.fetchLingerMs && Number(batch.offsetLag()) <= 0) await this.fetchLinger();
  }

  /**
   * Waits out the fetch linger ({@link KafkaTransportOptions.fetchLingerMs}): kafkajs fetches
   * again once every batch of its last fetch was handled, so this delays the next fetch. The
   * batches of one fetch share one deadline.
   */
  private async fetchLinger(): Promise<void> {
    if (this.closing) return;
    const now = this.now();
    if (this.lingerUntil <= now) this.lingerUntil = now + (this.options.fetchLingerMs ?? 0);
    await new Promise((resolve) => setTimeout(resolve, this.lingerUntil - now));
  }

  /**
   * After a rebalance the partitions start anew from their committed offsets, with new
   * pipelines. An old pipeline may still hold records that are not finished: its partition is
   * rewound to the first of them (also overriding a seek of the old generation still pending),
   * so a record in flight is handled again rather than skipped (at least once). Nothing stays
   * paused by a timer of the old assignment: a head record still not due pauses it again.
   */
  private rejoined(): void {
    this.generation += 1;
    if (!this.closing) this.state = 'consuming';
    for (const [key, old] of this.pipelines) {
      const unfinished = old.firstUnfinished();
      const [topic, partition] = splitKey(key);
      if (unfinished !== undefined) {
        this.safely('rewind after a rebalance', () =>
          this.consumer?.seek({ topic, partition, offset: unfinished }),
        );
      }
      // The old pipelines finish what they hold in the background.
      void old.drain().then(() => this.live.delete(old));
    }
    this.pipelines = new Map();
    if (!this.closing) this.resumeAll();
  }

  /** The pipeline of a partition in the current assignment, made on its first batch. */
  private pipeline(topic: string, partition: number, handle: PipelineHandler): PartitionPipeline {
    const key = `${topic}:${partition}`;
    const existing = this.pipelines.get(key);
    if (existing) return existing;
    const generation = this.generation;
    // Still this member's partition: its finished records are committed, also while closing
    // (a close that skipped them had the next member handle them again).
    const owned = (): boolean => generation === this.generation;
    // Also not closing: nothing is paused, rewound or resumed any more.
    const current = (): boolean => owned() && !this.closing;
    const pipeline = new PartitionPipeline(
      handle,
      {
        maxInFlight: this.options.maxInFlightPerPartition,
        dueAt: (record) => this.dueAt(record),
        now: this.now,
        failureBackoffMs: this.options.failureBackoffMs,
        admissionWaitMs: ADMISSION_WAIT_MS,
      },
      {
        // Only the current generation commits: an old pipeline's partition may be another
        // member's now, and its records are handled again from the rewind.
        commit: (offset) =>
          owned() ? this.commits.commit({ topic, partition, offset }, owned) : Promise.resolve(),
        rewind: (offset, resumeAt) => {
          if (current()) this.pauseUntil(topic, partition, offset, resumeAt);
        },
        hold: (offset) => {
          if (!current()) return;
          this.safely('hold', () => {
            clearTimeout(this.resumeTimers.get(key));
            this.resumeTimers.delete(key);
            this.consumer?.pause([{ topic, partitions: [partition] }]);
            this.consumer?.seek({ topic, partition, offset });
          });
        },
        release: () => {
          if (current()) {
            this.safely('release', () =>
              this.consumer?.resume([{ topic, partitions: [partition] }]),
            );
          }
        },
        failed: (offset, error) => {
          this.log.error(
            `handler failed on ${topic}[${partition}]@${offset}; retrying in ${this.options.failureBackoffMs} ms: ${describe(error)}`,
          );
          // Nothing more is fetched until the records in flight finish and it rewinds.
          if (!current()) return;
          this.safely('pause after a failure', () => {
            clearTimeout(this.resumeTimers.get(key));
            this.resumeTimers.delete(key);
            this.consumer?.pause([{ topic, partitions: [partition] }]);
          });
        },
        commitFailed: (error) => {
          this.log.warn(`commit on ${topic}[${partition}] refused: ${describe(error)}; retrying`);
        },
      },
    );
    this.pipelines.set(key, pipeline);
    this.live.add(pipeline);
    return pipeline;
  }

  /** Pauses a partition, rewinds it to `offset`, and resumes it at `resumeAt`. */
  private pauseUntil(topic: string, partition: number, offset: string, resumeAt: number): void {
    const consumer = this.consumer;
    if (!consumer) return;
    const key = `${topic}:${partition}`;
    this.safely('pause until due', () => {
      consumer.pause([{ topic, partitions: [partition] }]);
      consumer.seek({ topic, partition, offset });
    });
    clearTimeout(this.resumeTimers.get(key));
    const delayMs = Math.max(0, resumeAt - this.now());
    const timer = setTimeout(() => {
      this.resumeTimers.delete(key);
      this.safely('resume', () => this.consumer?.resume([{ topic, partitions: [partition] }]));
    }, delayMs);
    this.resumeTimers.set(key, timer);
  }

  /**
   * Runs a pause, seek or resume. kafkajs throws from them while it restarts a crashed
   * consumer; the restart starts from the committed offsets anyway, so it is only logged.
   */
  private safely(what: string, action: () => void): void {
    try {
      action();
    } catch (error) {
      this.log.warn(`${what} skipped: ${describe(error)}`);
    }
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

/** Whether `promise` settled within `timeoutMs` (its rejection counts as settled). */
async function within(timeoutMs: number, promise: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** `topic:partition` back into its parts (a topic name may contain colons). */
function splitKey(key: string): [string, number] {
  const at = key.lastIndexOf(':');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}

/** Nest hands handler errors back as plain `{ status, message }` objects. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
}
