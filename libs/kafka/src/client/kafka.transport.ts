import { Logger } from '@nestjs/common';
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import { Consumer, ConsumerCrashEvent, EachBatchPayload } from 'kafkajs';

import { askFetchWait } from '../internals/fetch-wait.replacement';
import { beforeRejoin, leaveWhileJoining } from '../internals/rejoin.replacement';
import { ConsumerState, ConsumerStatus } from '../semantics/consumer-health';
import { OffsetCommits } from '../semantics/offset-commits';
import { PipelineHandler } from '../semantics/partition-pipeline';
import { settledWithin } from '../semantics/settled-within';
import { AssignedPipelines } from './assigned-pipelines';
import { CommitWarnings } from './commit-warnings';
import { describeError } from './describe-error';
import { incomingRecord } from './incoming-record';
import {
  closeTimeoutMs,
  consumerConfig,
  KafkaTransportOptions,
  maxWaitTimeMs,
  PROMPT_MAX_WAIT_MS,
} from './kafka-transport.options';
import { PartitionControl } from './partition-control';

/**
 * How long finished offsets gather before they are committed, all partitions in one request
 * ({@link OffsetCommits}): a crash replays at most about this much more. Shorter cost a
 * commit request every few dozen calls at a moderate rate (bench/PIPELINE.md).
 */
const COMMIT_GATHER_MS = 200;

/**
 * Pause before the transport makes a new consumer after one crashed for good (kafkajs
 * restarts a consumer itself only after a retriable error).
 */
const RECREATE_DELAY_MS = 5_000;

/**
 * Longest a member waits, before it joins its group again, for its records in flight to finish:
 * the whole group waits for its join meanwhile.
 */
const REJOIN_DRAIN_MS = 3_000;

/** A refused commit is tried again after this long, doubling up to the maximum. */
const COMMIT_RETRY_MS = 1_000;
const COMMIT_RETRY_MAX_MS = 30_000;

/**
 * A record still unfinished after this long is logged once: the partition's commits wait
 * for it. Longer than any handler's own bounded waits (a delivery's request and its retries).
 */
const STUCK_RECORD_MS = 60_000;
/** How often the partitions' first unfinished records are looked at. */
const STUCK_SWEEP_MS = 10_000;

/**
 * Handles one record; resolves once everything the record caused is durable, or answers
 * {@link DurableLater} to free the record's slot before that (its offset waits).
 */
export type RecordHandler = PipelineHandler;

/**
 * This member's partitions by logical topic after a group join, or `undefined` while it owns
 * none for certain (a rebalance under way, a crashed consumer).
 */
export type AssignmentListener = (
  owned: ReadonlyMap<string, readonly number[]> | undefined,
) => void;

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
  private readonly assignmentListeners: AssignmentListener[] = [];
  private readonly now: () => number;
  private consumer?: Consumer;
  /** Set by {@link close}: nothing more is admitted, paused or resumed; commits still go. */
  private closing = false;
  private state: ConsumerState = 'joining';
  /** This member's id in its group since its last join. */
  private memberId?: string;
  /** A new consumer due after one crashed for good. */
  private recreateTimer?: NodeJS.Timeout;
  /** Stops setting the group's fetch wait ({@link fetchWaitMs}); set while consuming. */
  private stopAskingFetchWait?: () => void;
  /** Stops finishing and committing before each rejoin ({@link beforeRejoin}). */
  private stopHookingRejoin?: () => void;
  /** Looks for records holding their partition's commits ({@link sweepStuck}). */
  private stuckSweep?: NodeJS.Timeout;
  /** The subscribed topics, prefixed. */
  private subscribed: string[] = [];
  /** Pauses, rewinds and resumes partitions, with their resume timers. */
  private readonly partitions: PartitionControl;
  /** The partitions' pipelines, of this assignment and of older ones still draining. */
  private readonly assignment: AssignedPipelines;
  /** When the linger after the last fetch that caught up ends; its other batches wait as long. */
  private lingerUntil = 0;
  /** Says when commits stand still (refused, or held back by a record). */
  private readonly warnings: CommitWarnings;
  /** The partitions' finished offsets, committed together. */
  private readonly commits = new OffsetCommits(
    (offsets) => this.consumer?.commitOffsets(offsets) ?? Promise.resolve(),
    COMMIT_GATHER_MS,
    {
      firstMs: COMMIT_RETRY_MS,
      maxMs: COMMIT_RETRY_MAX_MS,
      failed: (error, offsets, trouble) => this.warnings.refused(error, offsets, trouble),
      resumed: (trouble) => this.warnings.resumed(trouble),
      now: () => this.now(),
    },
  );

  constructor(private readonly options: KafkaTransportOptions) {
    super();
    this.now = options.now ?? Date.now;
    this.warnings = new CommitWarnings(options.groupId, this.log, () => this.now());
    this.partitions = new PartitionControl(
      () => this.consumer,
      this.now,
      (what, error) => this.log.warn(`${what} skipped: ${describeError(error)}`),
    );
    this.assignment = new AssignedPipelines({
      options,
      now: this.now,
      commits: this.commits,
      partitions: this.partitions,
      closing: () => this.closing,
      log: this.log,
    });
    options.health?.track(() => this.consumerStatus());
  }

  /** Logs each record that has held its partition's commits for {@link STUCK_RECORD_MS}. */
  private sweepStuck(): void {
    if (!this.closing) this.warnings.stuck(this.assignment.stuckHeads(this.now(), STUCK_RECORD_MS));
  }

  /** What this consumer's next fetch may wait on the broker: short while a partition is about to flow. */
  private fetchWaitMs(): number {
    const longest = maxWaitTimeMs(this.options);
    const soon = this.partitions.resumesWithin(this.now(), longest);
    return soon ? Math.min(PROMPT_MAX_WAIT_MS, longest) : longest;
  }

  /**
   * Tells `listener` this member's partitions of each subscribed topic (by logical name) after
   * every group join, and `undefined` when it stops owning any for a while: a rebalance began
   * (eager: every member gives its partitions up before any is handed out again) or the
   * consumer crashed. Call before the app starts.
   */
  onAssignment(listener: AssignmentListener): void {
    this.assignmentListeners.push(listener);
  }

  /** Registers the handler of one logical topic; call before the app starts. */
  consume(topic: string, handler: RecordHandler): void {
    // Kept in Nest's map of handlers, which types them as promises; only the pipeline calls it.
    this.addHandler(topic, handler as Parameters<Server['addHandler']>[1], true);
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
   * member at once, from the committed offsets. A join under way (a rebalance) is not waited
   * for: the member leaves at once, so the rebalance goes on without it.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.recreateTimer);
    this.commits.stopRetrying();
    this.partitions.cancelTimers();
    const consumer = this.consumer;
    try {
      this.partitions.pauseTopics(this.subscribed);
      const timeoutMs = closeTimeoutMs(this.options);
      const drained = await settledWithin(timeoutMs, this.assignment.drain());
      if (!drained) {
        this.log.warn(
          `records still in flight after ${timeoutMs} ms; committing what finished and leaving`,
        );
      }
      await this.commits.flush();
    } finally {
      this.state = 'stopped';
      // Leaves the group; also stops a restart kafkajs may have scheduled after a crash.
      // Begun first: kafkajs's consumer loop is told to stop before a join under way is left.
      await Promise.all([
        consumer?.disconnect(),
        consumer && this.memberId ? this.leaveWhileJoining(this.memberId) : undefined,
      ]);
      this.consumer = undefined;
      this.stopAskingFetchWait?.();
      this.stopAskingFetchWait = undefined;
      this.stopHookingRejoin?.();
      this.stopHookingRejoin = undefined;
      clearInterval(this.stuckSweep);
      this.stuckSweep = undefined;
      this.log.log(`group ${this.options.groupId} left`);
    }
  }

  /** Leaves the group now if this member's join is under way (its consumer already stopping). */
  private async leaveWhileJoining(memberId: string): Promise<void> {
    try {
      if (await leaveWhileJoining(this.options.groupId, memberId))
        this.log.log(`group ${this.options.groupId} left during its rebalance`);
    } catch (error) {
      this.log.warn(`leaving group ${this.options.groupId}: ${describeError(error)}`);
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
    // kafkajs restarts a crashed consumer (e.g. after a broker outage) on a timer; once
    // closing, a restart would leave a consumer nobody stops.
    const consumer = connection.consumer(consumerConfig(this.options, () => !this.closing));
    this.consumer = consumer;
    this.stopAskingFetchWait ??= askFetchWait(this.options.groupId, () => this.fetchWaitMs());
    this.stopHookingRejoin ??= beforeRejoin(this.options.groupId, () => this.beforeRejoin());
    // Unreferenced: it must never keep a process alive.
    this.stuckSweep ??= setInterval(() => this.sweepStuck(), STUCK_SWEEP_MS).unref();
    this.state = 'joining';
    // After a rebalance, nothing may stay paused by a timer that belonged to the old
    // assignment: resume everything; a head record still not due pauses it again.
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.memberId = event?.payload?.memberId;
      this.rejoined(event?.payload?.memberAssignment ?? {});
    });
    consumer.on(consumer.events.CRASH, (event) => this.crashed(consumer, event));
    // The in-memory consumer of the tests never rebalances.
    const rebalancing = (consumer.events as Partial<typeof consumer.events>).REBALANCING;
    if (rebalancing !== undefined) consumer.on(rebalancing, () => this.tellAssignment(undefined));
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
      this.log.error(
        `consumer of group ${this.options.groupId} failed to run: ${describeError(error)}`,
      );
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
    this.tellAssignment(undefined);
    if (event.payload.restart) return;
    this.log.error(
      `consumer of group ${this.options.groupId} stopped on ${describeError(event.payload.error)}; a new one in ${RECREATE_DELAY_MS} ms`,
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
          this.log.error(`new consumer of group ${this.options.groupId}: ${describeError(error)}`);
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
    const pipeline = this.assignment.pipeline(batch.topic, batch.partition, handler);
    const records = batch.messages.map((m) => incomingRecord(logical, batch.partition, m));
    const generation = this.assignment.generation;
    const last = await pipeline.admit(
      records,
      () =>
        payload.isRunning() &&
        !payload.isStale() &&
        !this.closing &&
        generation === this.assignment.generation,
    );
    // Fetching goes on after the last record admitted, while earlier ones are still in flight;
    // a batch of an older generation leaves the new one's fetch position alone.
    if (last !== undefined && generation === this.assignment.generation)
      payload.resolveOffset(last);
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
   * Before the consumer joins its group again while consuming (a member joined or left): the
   * records in flight finish, for {@link REJOIN_DRAIN_MS} at most, and what finished is
   * committed while the partitions are still this member's, so that their next owner does not
   * handle it again. After a crash nothing is held that a commit could keep.
   */
  private async beforeRejoin(): Promise<void> {
    if (this.state !== 'consuming' || this.closing) return;
    await settledWithin(REJOIN_DRAIN_MS, this.assignment.drain());
    await this.commits.flush();
  }

  /** A rebalance: consuming again, the partitions' pipelines start anew. */
  private rejoined(memberAssignment: Record<string, number[]>): void {
    if (!this.closing) this.state = 'consuming';
    this.assignment.rebalanced();
    const owned = new Map<string, readonly number[]>();
    for (const [topic, partitions] of Object.entries(memberAssignment)) {
      const logical = this.options.connection.logicalTopic(topic);
      if (logical !== undefined) owned.set(logical, partitions);
    }
    this.tellAssignment(owned);
  }

  private tellAssignment(owned: ReadonlyMap<string, readonly number[]> | undefined): void {
    for (const listener of this.assignmentListeners) listener(owned);
  }
}
