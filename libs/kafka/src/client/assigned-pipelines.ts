import { dueAtOf } from '../semantics/due-time';
import { OffsetCommits } from '../semantics/offset-commits';
import { PartitionPipeline, PipelineHandler } from '../semantics/partition-pipeline';
import { describeError } from './describe-error';
import { KafkaTransportOptions, maxWaitTimeMs } from './kafka-transport.options';
import { PartitionControl } from './partition-control';

/**
 * Longest a fetched batch waits for a free slot of its partition before the partition is held
 * (paused and rewound) until one frees. Short, because the consumer fetches again from a
 * broker only after every batch of the last fetch was handed over; long enough that a busy
 * partition keeps flowing without pause-and-refetch round trips.
 */
const ADMISSION_WAIT_MS = 1_000;

/** A partition whose first unfinished record has been in flight long: its commits wait for it. */
export interface StuckHead {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly forMs: number;
}

/** What the pipelines of a transport share. */
export interface AssignedPipelinesDeps {
  readonly options: Pick<
    KafkaTransportOptions,
    'maxInFlightPerPartition' | 'dueAtHeader' | 'failureBackoffMs' | 'maxWaitTimeMs'
  >;
  readonly now: () => number;
  readonly commits: OffsetCommits;
  readonly partitions: PartitionControl;
  /** True once the transport closes: nothing is paused, rewound or resumed any more. */
  readonly closing: () => boolean;
  readonly log: { error(message: string): void; warn(message: string): void };
}

/**
 * The partition pipelines of a transport's current assignment, made on each partition's first
 * batch, and those of older assignments still finishing what they hold. Every rebalance starts
 * a new generation: an older pipeline no longer commits, pauses or rewinds its partition.
 */
export class AssignedPipelines {
  /** The pipelines of the current assignment by `topic:partition`. */
  private pipelines = new Map<string, PartitionPipeline>();
  /** Every pipeline that may still have records in flight, for a draining close. */
  private readonly live = new Set<PartitionPipeline>();
  /**
   * Where the pipelines of older generations had finished each partition (the offset after
   * their finished prefix), those still finishing by partition: a new pipeline does not handle
   * again what they finished (durable effects whose commit was lost, as in a broker outage),
   * whoever held the partition in between.
   */
  private readonly finished = new Map<string, bigint>();
  private readonly finishing = new Map<string, Set<PartitionPipeline>>();
  /** Each current pipeline's first unfinished record at the last sweep, since when, and if told. */
  private readonly heads = new Map<string, { offset: string; since: number; told: boolean }>();
  private current = 0;

  constructor(private readonly deps: AssignedPipelinesDeps) {}

  /** Bumped by every rebalance. */
  get generation(): number {
    return this.current;
  }

  /**
   * After a rebalance the partitions start anew from their committed offsets, with new
   * pipelines. An old pipeline may still hold records that are not finished: its partition is
   * rewound to the first of them (also overriding a seek of the old generation still pending),
   * so a record in flight is handled again rather than skipped (at least once). Nothing stays
   * paused by a timer of the old assignment: a head record still not due pauses it again.
   */
  rebalanced(): void {
    this.current += 1;
    for (const [key, old] of this.pipelines) {
      const unfinished = old.firstUnfinished();
      const [topic, partition] = splitKey(key);
      if (unfinished !== undefined) this.deps.partitions.rewind(topic, partition, unfinished);
      const finishing = this.finishing.get(key) ?? new Set<PartitionPipeline>();
      this.finishing.set(key, finishing.add(old));
      // The old pipelines finish what they hold in the background; a record holding its lane
      // is read again by the partition's owner, so it stops at once.
      old.abandonHolds();
      void old.drain().then(() => {
        this.live.delete(old);
        finishing.delete(old);
        const through = later(this.finished.get(key), old.finishedBefore());
        if (through !== undefined) this.finished.set(key, through);
      });
    }
    this.pipelines = new Map();
    this.heads.clear();
    if (!this.deps.closing()) this.deps.partitions.resumeAll();
  }

  /**
   * The partitions of the current assignment whose first unfinished record was the same at
   * every sweep for `afterMs` or more, each record once: nothing after it is committed, so
   * the partition's next owner handles again everything since (a handler that never
   * answers would otherwise go unnoticed until then). Call every few seconds.
   */
  stuckHeads(now: number, afterMs: number): StuckHead[] {
    const stuck: StuckHead[] = [];
    for (const [key, pipeline] of this.pipelines) {
      const offset = pipeline.firstUnfinished();
      const head = this.heads.get(key);
      if (offset === undefined) this.heads.delete(key);
      else if (head === undefined || head.offset !== offset)
        this.heads.set(key, { offset, since: now, told: false });
      else if (!head.told && now - head.since >= afterMs) {
        head.told = true;
        const [topic, partition] = splitKey(key);
        stuck.push({ topic, partition, offset, forMs: now - head.since });
      }
    }
    return stuck;
  }

  /**
   * Resolves once every pipeline, of any generation, has nothing in flight. Records holding
   * their lanes stop at once: the partition's next owner reads them again.
   */
  drain(): Promise<unknown> {
    for (const pipeline of this.live) pipeline.abandonHolds();
    return Promise.all([...this.live].map((pipeline) => pipeline.drain()));
  }

  /** The pipeline of a partition in the current assignment, made on its first batch. */
  pipeline(topic: string, partition: number, handle: PipelineHandler): PartitionPipeline {
    const key = `${topic}:${partition}`;
    const existing = this.pipelines.get(key);
    if (existing) return existing;
    const { options, commits, partitions, log } = this.deps;
    const generation = this.current;
    // Still this member's partition: its finished records are committed, also while closing
    // (a close that skipped them had the next member handle them again).
    const owned = (): boolean => generation === this.current;
    // Also not closing: nothing is paused, rewound or resumed any more.
    const current = (): boolean => owned() && !this.deps.closing();
    const pipeline = new PartitionPipeline(
      handle,
      {
        maxInFlight: options.maxInFlightPerPartition,
        dueAt: (record) => dueAtOf(record, options.dueAtHeader),
        dueWindowMs: maxWaitTimeMs(options),
        now: this.deps.now,
        failureBackoffMs: options.failureBackoffMs,
        admissionWaitMs: ADMISSION_WAIT_MS,
        finishedBefore: () => this.finishedBefore(key),
      },
      {
        // Only the current generation commits: an old pipeline's partition may be another
        // member's now, and its records are handled again from the rewind.
        commit: (offset) =>
          owned() ? commits.commit({ topic, partition, offset }, owned) : Promise.resolve(),
        rewind: (offset, resumeAt) => {
          if (current()) partitions.pauseUntil(topic, partition, offset, resumeAt);
        },
        hold: (offset) => {
          if (current()) partitions.hold(topic, partition, offset);
        },
        release: () => {
          if (current()) partitions.release(topic, partition);
        },
        failed: (offset, error) => {
          log.error(
            `handler failed on ${topic}[${partition}]@${offset}; retrying in ${options.failureBackoffMs} ms: ${describeError(error)}`,
          );
          // Nothing more is fetched until the records in flight finish and it rewinds.
          if (current()) partitions.pauseAfterFailure(topic, partition);
        },
      },
    );
    this.pipelines.set(key, pipeline);
    this.live.add(pipeline);
    return pipeline;
  }

  /** Where older generations' pipelines had finished the partition, if anywhere. */
  private finishedBefore(key: string): bigint | undefined {
    let offset = this.finished.get(key);
    for (const old of this.finishing.get(key) ?? []) offset = later(offset, old.finishedBefore());
    return offset;
  }
}

/** The later of two offsets, either possibly unknown. */
function later(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b;
  return b === undefined || a >= b ? a : b;
}

/** `topic:partition` back into its parts (a topic name may contain colons). */
function splitKey(key: string): [string, number] {
  const at = key.lastIndexOf(':');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}
