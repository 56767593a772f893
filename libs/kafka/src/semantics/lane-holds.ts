import { HoldStopReason, LaneHold } from './lane-hold';

/** Lines full this long with lanes held and nothing finishing: the oldest hold stops. */
const LANE_ROOM_WAIT_MS = 5_000;

/** What the holds need of a held record: its place in the partition and its lane. */
export interface HeldRecord {
  readonly offset: bigint;
  /** The hash of its key; undefined without a key. */
  readonly lane: number | undefined;
}

/** What the holds watch of their partition. */
export interface HoldsPartition {
  /** Whether the partition is held for want of room (its lines or its slots full). */
  held(): boolean;
  /** Records finished so far: tells progress from a stall. */
  finishedCount(): number;
}

/** A record whose handler answered {@link LaneHold}. */
interface Held<T> {
  readonly task: T;
  readonly hold: LaneHold;
  /** Asked to stop already. */
  stopping: boolean;
}

/**
 * A partition's records holding their keys' lanes without a slot ({@link LaneHold}), until
 * their holds settle; and when to ask a hold to stop: as many records of its key wait behind it
 * as it allows (`pending`), or the lines stayed full with nothing finishing for `roomWaitMs`
 * (`partition_full`, the oldest hold, one per wait while it lasts).
 */
export class LaneHolds<T extends HeldRecord> {
  private readonly holding = new Set<Held<T>>();
  /** Watches lines full while lanes are held. */
  private roomTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly roomWaitMs: number;

  constructor(
    private readonly partition: HoldsPartition,
    roomWaitMs: number | undefined,
  ) {
    this.roomWaitMs = roomWaitMs ?? LANE_ROOM_WAIT_MS;
  }

  /** Records holding their lanes. */
  get size(): number {
    return this.holding.size;
  }

  /**
   * Holds `task`'s lane until `hold` settles, then hands its answer (or its rejection, with
   * `failed`) to `settled`; never for a hold abandoned before.
   */
  add(task: T, hold: LaneHold, settled: (answer: unknown, failed: boolean) => void): void {
    const held: Held<T> = { task, hold, stopping: false };
    this.holding.add(held);
    hold.settled.then(
      (answer) => {
        if (this.holding.delete(held)) settled(answer, false);
      },
      (error: unknown) => {
        if (this.holding.delete(held)) settled(error, true);
      },
    );
  }

  /** Asks the hold of `lane`, if any, to stop once `waiting` records wait behind it. */
  checkWaiting(lane: number, waiting: number): void {
    for (const held of this.holding) {
      if (held.task.lane !== lane) continue;
      if (!held.stopping && waiting >= held.hold.maxWaiting) this.stop(held, 'pending');
      return;
    }
  }

  /**
   * The lines are full: unless a record finishes within the room wait, the held lanes stop the
   * partition, so the oldest hold is asked to stop (one per wait while it lasts).
   */
  watchRoom(): void {
    if (this.holding.size === 0 || this.roomTimer !== undefined) return;
    const finishedBefore = this.partition.finishedCount();
    this.roomTimer = setTimeout(() => {
      this.roomTimer = undefined;
      if (!this.partition.held() || this.holding.size === 0) return;
      if (this.partition.finishedCount() === finishedBefore) {
        const oldest = [...this.holding]
          .filter((held) => !held.stopping)
          .sort((a, b) => (a.task.offset < b.task.offset ? -1 : 1))[0];
        if (oldest !== undefined) this.stop(oldest, 'partition_full');
      }
      this.watchRoom();
    }, this.roomWaitMs);
    this.roomTimer.unref?.();
  }

  /** Stops watching the lines' room (the partition is given up). */
  stopWatching(): void {
    clearTimeout(this.roomTimer);
    this.roomTimer = undefined;
  }

  /**
   * Ends the holds of the records `which` picks without waiting for them: each is asked to stop
   * (`abandon`), its answer ignored, and handed to `dropped` in turn.
   */
  abandon(which: (task: T) => boolean, dropped: (task: T) => void): void {
    for (const held of this.holding) {
      if (!which(held.task) || !this.holding.delete(held)) continue;
      held.hold.stop('abandon');
      dropped(held.task);
    }
  }

  private stop(held: Held<T>, reason: Exclude<HoldStopReason, 'abandon'>): void {
    held.stopping = true;
    held.hold.stop(reason);
  }
}
