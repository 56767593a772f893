import { DueWaits } from './due-time';
import { DurableLater, DurableWaits } from './durable-later';
import { FinishedPrefix } from './finished-prefix';
import { LaneHold } from './lane-hold';
import { LaneHolds } from './lane-holds';
import { laneOf, Lanes } from './lanes';
import { PipelineControl, PipelineHandler, PipelineOptions } from './pipeline-options';
import { IncomingRecord } from './records';
import { Semaphore } from './semaphore';

export { DurableLater } from './durable-later';
export type { PipelineControl, PipelineHandler, PipelineOptions } from './pipeline-options';

/** A rejection with whatever was thrown, as it was (`run` hands it to `failed`). */
// eslint-disable-next-line @typescript-eslint/require-await -- a throw made a rejection
async function thrown(error: unknown): Promise<never> {
  throw error;
}

/** An admitted record. */
interface Task {
  readonly record: IncomingRecord;
  readonly offset: bigint;
  /** When it may run (epoch ms), if admitted before it was due. */
  readonly dueAt?: number;
  done: boolean;
  /**
   * The hash of its key ({@link laneOf}); undefined without a key; {@link UNHASHED} until a
   * line of its key matters (see `admit` and `openLane`).
   */
  lane: number | undefined;
}

/** A task's lane before its key was hashed (a hash is never negative). */
const UNHASHED = -1;

/**
 * One partition's records, handled with bounded concurrency across fetches: a record is
 * admitted as soon as a slot is free, whatever batch it came in, so one slow record holds
 * one slot, never the partition. Admission waits only briefly: with every slot taken for
 * longer, the partition is held (rewound to the first record not admitted) until a slot frees,
 * so the consumer's other partitions keep being fetched. Records that share a key run in order,
 * in one slot: the ones waiting behind a slow record of their key hold no slot. Only the
 * finished prefix is committed (at least once), as it advances. A record not yet due rewinds
 * the partition to it until shortly before it is, then waits in memory; a handler that throws stops admission, and once the
 * records in flight have finished the partition is rewound to the failed record after a
 * back-off. A record may hold its key's line without a slot ({@link LaneHold}, a delivery
 * retried in place); such holds are bounded by the lines' room (`laneRoomWaitMs`) and by what
 * the handler allows to wait behind it.
 */
export class PartitionPipeline {
  private readonly slots: Semaphore;
  /** Keys with a record running, and the records of each waiting behind it (no slot). */
  private readonly lanes = new Lanes<Task>();
  /** Admitted records in offset order, and the commits of their finished prefix. */
  private readonly prefix: FinishedPrefix<Task>;
  private lastAdmitted: bigint | undefined;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private failure: bigint | undefined;
  /** The latest due time of an admitted record (epoch ms): later records wait for it too. */
  private notBefore = 0;
  /** Waits for due times, shared so that records due together start in order. */
  private readonly dueWaits: DueWaits;
  /** Held for want of a slot. */
  private held = false;
  /** Records whose handler answered {@link DurableLater}, until their effects are durable. */
  private readonly durableWaits = new DurableWaits<Task>((tasks, failed, error) =>
    this.durableSettled(tasks, failed, error),
  );
  /** Until the first record handled: records an earlier pipeline finished are skipped. */
  private skipping = true;
  /** Records whose handler answered {@link LaneHold}, until it settles. */
  private readonly holds: LaneHolds<Task>;
  /** Records finished so far: the holds tell progress from a stall by it. */
  private finishedCount = 0;

  constructor(
    private readonly handle: PipelineHandler,
    private readonly options: PipelineOptions,
    private readonly control: PipelineControl,
  ) {
    this.slots = new Semaphore(options.maxInFlight);
    this.prefix = new FinishedPrefix((offset) => control.commit(offset));
    this.dueWaits = new DueWaits(options.now);
    const partition = { held: () => this.held, finishedCount: () => this.finishedCount };
    this.holds = new LaneHolds(partition, options.laneRoomWaitMs);
  }

  /**
   * Admits a fetched batch's records in order, waiting up to `admissionWaitMs` for a free
   * slot. Stops at a record not yet due (rewinding to it), when no slot freed in time
   * (holding the partition at that record until one does), after a failure, or when
   * `running` turns false. The wait is bounded because the consumer fetches again from a
   * broker only once every batch of its last fetch was handed over.
   * @returns the offset of the last record admitted, from which fetching may continue
   */
  async admit(
    records: readonly IncomingRecord[],
    running: () => boolean,
  ): Promise<string | undefined> {
    let last: string | undefined;
    // Asked again only after a wait: nothing between two waits can change it (a rewind or a
    // hold here ends the loop).
    let active = running();
    for (const record of records) {
      const offset = BigInt(record.offset);
      // A batch fetched again after a rewind may start with records already admitted.
      if (this.lastAdmitted !== undefined && offset <= this.lastAdmitted) continue;
      if (this.skipping && this.finishedEarlier(record, offset)) {
        last = record.offset;
        continue;
      }
      if (this.failure !== undefined || this.held || !active) break;
      // A record admitted behind one not yet due runs no earlier than that one.
      const runAt = Math.max(this.options.dueAt(record) ?? 0, this.notBefore);
      // Due at once, with none due later before it (the main topic): no clock needed.
      const now = runAt === 0 ? 0 : this.options.now();
      if (runAt - now > this.options.dueWindowMs) {
        this.control.rewind(record.offset, runAt - this.options.dueWindowMs);
        break;
      }
      const dueAt = runAt > now ? runAt : undefined;
      if (dueAt !== undefined) this.notBefore = dueAt;
      // With no line open, no record of its key runs: its key is hashed only if it runs with a
      // promise (a record answered DurableLater at once, a batched call, never opens a line).
      const lane = this.lanes.empty ? UNHASHED : laneOf(record.key);
      if (lane !== undefined && lane !== UNHASHED && this.lanes.has(lane)) {
        // Its key has a record running: it waits in that line, which needs no slot of its
        // own (a record hanging for seconds must not fill the partition with its key's next).
        if (this.lanes.queued >= this.options.maxInFlight) {
          this.hold(record.offset);
          this.holds.watchRoom();
          break;
        }
        this.enqueue({ record, offset, dueAt, done: false, lane });
      } else {
        if (!this.slots.tryAcquire()) {
          const acquired = await this.slots.acquireWithin(this.options.admissionWaitMs);
          active = running();
          if (!acquired) {
            this.hold(record.offset);
            break;
          }
          if (this.failure !== undefined || !active) {
            this.slots.release();
            break;
          }
        }
        // No record was admitted during the wait, so its lane is still free.
        this.start({ record, offset, dueAt, done: false, lane });
      }
      last = record.offset;
    }
    return last;
  }

  /**
   * The offset after the finished prefix (the next one to commit), or undefined before any
   * record finished: where a later pipeline of this partition may start handling again.
   */
  finishedBefore(): bigint | undefined {
    return this.prefix.finishedBefore();
  }

  /**
   * Whether an earlier pipeline finished the record: then it is admitted as finished (so it is
   * committed) without running. The first record not finished earlier ends the skipping.
   */
  private finishedEarlier(record: IncomingRecord, offset: bigint): boolean {
    const before = this.options.finishedBefore?.();
    if (before === undefined || offset >= before) {
      this.skipping = false;
      return false;
    }
    this.prefix.add({ record, offset, done: true, lane: undefined });
    this.lastAdmitted = offset;
    this.prefix.advance();
    return true;
  }

  /** The first admitted record not finished yet, if any (where a new owner must start). */
  firstUnfinished(): string | undefined {
    return this.prefix.firstUnfinished()?.offset.toString();
  }

  /** Resolves once no record is in flight and the finished prefix is committed. */
  async drain(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.prefix.committed();
  }

  /** Stops admitting: the partition is held at `offset` until a record finishes. */
  private hold(offset: string): void {
    this.held = true;
    this.control.hold(offset);
  }

  private admitted(task: Task): void {
    this.prefix.add(task);
    this.lastAdmitted = task.offset;
    this.inFlight += 1;
  }

  /** Runs a record in the slot taken for it; its key's later records line up behind it. */
  private start(task: Task): void {
    this.admitted(task);
    if (task.dueAt !== undefined) {
      this.openLane(task);
      void this.run(task);
      return;
    }
    const answered = this.handleNow(task);
    if (answered instanceof DurableLater) return this.answeredAtOnce(task, answered.durable);
    this.openLane(task);
    void this.run(task, answered);
  }

  /** A record runs in its slot: its key's later records line up behind it. */
  private openLane(task: Task): void {
    if (task.lane === UNHASHED) task.lane = laneOf(task.record.key);
    if (task.lane !== undefined) this.lanes.open(task.lane);
  }

  /** Calls the handler of a record due now; a throw is its answer's rejection. */
  private handleNow(task: Task): Promise<unknown> | DurableLater {
    try {
      const answer = this.handle(task.record);
      return answer instanceof DurableLater ? answer : Promise.resolve(answer);
    } catch (error) {
      return thrown(error);
    }
  }

  /**
   * The handler answered a DurableLater at once: the record's slot is free before the next
   * record is admitted (no line of its key formed), and it finishes when its effects are
   * durable, with no promise of its own.
   */
  private answeredAtOnce(task: Task, durable: Promise<void>): void {
    this.slots.release();
    this.finishWhenDurable(task, durable);
    this.roomFreed();
  }

  /** Lines a record up behind the records of its key admitted before it. */
  private enqueue(task: Task & { lane: number }): void {
    this.admitted(task);
    const waiting = this.lanes.enqueue(task.lane, task);
    if (this.holds.size > 0) this.holds.checkWaiting(task.lane, waiting);
  }

  /**
   * Handles one record (or waits for `answered`, its handler's answer already asked for); never
   * rejects. Then the next record of its lane, if any, runs in the same slot; otherwise the
   * slot is released. A record whose handler answered {@link DurableLater} finishes (for the
   * commit) when its effects are durable.
   */
  private async run(task: Task, answered?: Promise<unknown>): Promise<void> {
    let later: Promise<void> | undefined;
    let laneHold: LaneHold | undefined;
    try {
      if (task.dueAt !== undefined) await this.dueWaits.until(task.dueAt);
      // A failure earlier in the partition stops the records after it, also in this lane.
      if (answered !== undefined || this.failure === undefined || task.offset <= this.failure) {
        const answer = await (answered ?? this.handle(task.record));
        if (answer instanceof DurableLater) later = answer.durable;
        else if (answer instanceof LaneHold) laneHold = answer;
        else task.done = true;
      }
    } catch (error) {
      this.fail(task, error);
    } finally {
      if (laneHold !== undefined) this.startHold(task, laneHold);
      else this.ran(task, later);
    }
  }

  /** After a record ran in its slot: the next of its lane runs in that slot, or it frees. */
  private ran(task: Task, later: Promise<void> | undefined): void {
    const next = task.lane === undefined ? undefined : this.lanes.next(task.lane);
    if (next === undefined) this.slots.release();
    if (later === undefined) this.finished();
    else {
      this.finishWhenDurable(task, later);
      this.roomFreed();
    }
    if (next !== undefined) void this.run(next);
  }

  /**
   * A record answered {@link LaneHold}: its slot frees, its lane stays taken (its key's later
   * records keep waiting) and it stays unfinished until the hold settles.
   */
  private startHold(task: Task, hold: LaneHold): void {
    this.slots.release();
    this.holds.add(task, hold, (answer, failed) => this.endHold(task, answer, failed));
    // A partition held for want of a slot may fetch again: one just freed.
    if (this.held && this.failure === undefined && this.lanes.queued < this.options.maxInFlight) {
      this.held = false;
      this.control.release();
    }
    if (task.lane !== undefined) this.holds.checkWaiting(task.lane, this.lanes.waiting(task.lane));
    if (this.held) this.holds.watchRoom();
  }

  /** The hold settled: the record finishes as its answer says, and its lane runs on. */
  private endHold(task: Task, answer: unknown, failed: boolean): void {
    let later: Promise<void> | undefined;
    if (failed) this.fail(task, answer);
    else if (answer instanceof DurableLater) later = answer.durable;
    else task.done = true;
    const next = task.lane === undefined ? undefined : this.lanes.next(task.lane);
    if (later === undefined) this.finished();
    else {
      this.finishWhenDurable(task, later);
      this.roomFreed();
    }
    if (next !== undefined) void this.runInSlot(next);
  }

  /** Runs a lane's next record once a slot is free (its lane's hold had given its slot up). */
  private async runInSlot(task: Task): Promise<void> {
    if (!this.slots.tryAcquire()) await this.slots.acquire();
    await this.run(task);
  }

  /**
   * Ends every hold without waiting for it: its record and the records waiting in its lane stay
   * unfinished (nothing after them is committed), to be read again from the last commit. For a
   * pipeline whose partition is given up (rebalance, close): it drains without them.
   */
  abandonHolds(): void {
    this.holds.stopWatching();
    this.holds.abandon(
      () => true,
      (task) => this.abandoned(task),
    );
  }

  /** A hold was abandoned: its record and the records waiting in its lane count as finished. */
  private abandoned(task: Task): void {
    const waiting = task.lane === undefined ? 0 : this.lanes.drop(task.lane);
    this.finished(1 + waiting);
  }

  /** Finishes a task once its effects are durable. */
  private finishWhenDurable(task: Task, durable: Promise<void>): void {
    this.durableWaits.add(task, durable);
  }

  /** The effects of `tasks` are durable, or could not be made so (`failed`). */
  private durableSettled(tasks: readonly Task[], failed: boolean, error: unknown): void {
    for (const t of tasks) {
      if (failed) this.fail(t, error);
      else t.done = true;
    }
    this.finished(tasks.length);
  }

  /**
   * A record answered DurableLater: its slot (or its place in a line) is free though it has not
   * finished. A partition held for want of room fetches again once no record waits in a line
   * and half its slots are free; waiting for such records to finish could wait on the very
   * records held back (a batch forming until more calls come). The half keeps a partition
   * whose slots free one at a time from fetching again per record.
   */
  private roomFreed(): void {
    if (!this.held || this.failure !== undefined) return;
    if (this.lanes.queued > 0 || this.slots.free < this.options.maxInFlight / 2) return;
    this.held = false;
    this.control.release();
  }

  private fail(task: Task, error: unknown): void {
    if (this.failure === undefined || task.offset < this.failure) this.failure = task.offset;
    this.control.failed(task.record.offset, error);
    // Held records after the failure are read again from it: they stop holding now.
    this.holds.abandon(
      (held) => this.failure !== undefined && held.offset > this.failure,
      (held) => this.abandoned(held),
    );
  }

  /** After records finish: commit what is finished, fetch again if held, recover from a failure. */
  private finished(count = 1): void {
    this.inFlight -= count;
    this.finishedCount += count;
    this.prefix.advance();
    if (this.held && this.failure === undefined) {
      this.held = false;
      this.control.release();
    }
    if (this.inFlight > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    if (this.failure !== undefined) this.recover(this.failure);
  }

  /** Everything in flight has finished: rewind to the failed record, admit again from it. */
  private recover(failedAt: bigint): void {
    this.prefix.forget();
    this.lanes.clear();
    this.lastAdmitted = failedAt - 1n;
    this.failure = undefined;
    this.held = false;
    this.control.rewind(failedAt.toString(), this.options.now() + this.options.failureBackoffMs);
  }
}
