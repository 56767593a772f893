import type { Consumer } from 'kafkajs';

/** Where a {@link PartitionControl} reports an action kafkajs refused. */
export type SkippedAction = (what: string, error: unknown) => void;

/**
 * Pauses, rewinds and resumes the partitions of a transport's consumer, with at most one
 * resume timer per partition. kafkajs throws from pause, seek and resume while it restarts a
 * crashed consumer; the restart starts from the committed offsets anyway, so such an action is
 * skipped and reported, never thrown.
 */
export class PartitionControl {
  /** Resume timers by `topic:partition`, with the time each resumes at (epoch ms). */
  private readonly resumeTimers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  /** Partitions stopped until something here resumes them: held, or after a failure. */
  private readonly stopped = new Set<string>();

  constructor(
    /** The transport's consumer now (a crash or a restart makes a new one). */
    private readonly consumer: () => Consumer | undefined,
    private readonly now: () => number,
    private readonly skipped: SkippedAction,
  ) {}

  /** Pauses a partition, rewinds it to `offset`, and resumes it at `resumeAt` (epoch ms). */
  pauseUntil(topic: string, partition: number, offset: string, resumeAt: number): void {
    const consumer = this.consumer();
    if (!consumer) return;
    const key = `${topic}:${partition}`;
    this.safely('pause until due', () => {
      consumer.pause([{ topic, partitions: [partition] }]);
      consumer.seek({ topic, partition, offset });
    });
    this.cancelResume(topic, partition);
    this.stopped.delete(key);
    const delayMs = Math.max(0, resumeAt - this.now());
    const timer = setTimeout(() => {
      this.resumeTimers.delete(key);
      this.safely('resume', () => this.consumer()?.resume([{ topic, partitions: [partition] }]));
    }, delayMs);
    this.resumeTimers.set(key, { timer, at: resumeAt });
  }

  /**
   * Whether a partition may flow again within `withinMs` of `now`: one is held or stopped
   * after a failure (it resumes when a record finishes), or a resume timer is that close. The
   * consumer's next fetch should then not wait long on the broker (`fetch-wait.replacement.ts`).
   */
  resumesWithin(now: number, withinMs: number): boolean {
    if (this.stopped.size > 0) return true;
    for (const { at } of this.resumeTimers.values()) if (at - now < withinMs) return true;
    return false;
  }

  /** Stops fetching a partition and rewinds it to `offset` until {@link release}. */
  hold(topic: string, partition: number, offset: string): void {
    this.stopped.add(`${topic}:${partition}`);
    this.safely('hold', () => {
      this.cancelResume(topic, partition);
      this.consumer()?.pause([{ topic, partitions: [partition] }]);
      this.consumer()?.seek({ topic, partition, offset });
    });
  }

  /** Fetches a held partition again. */
  release(topic: string, partition: number): void {
    this.stopped.delete(`${topic}:${partition}`);
    this.safely('release', () => this.consumer()?.resume([{ topic, partitions: [partition] }]));
  }

  /** Stops fetching a partition whose handler threw, until its pipeline rewinds it. */
  pauseAfterFailure(topic: string, partition: number): void {
    this.stopped.add(`${topic}:${partition}`);
    this.safely('pause after a failure', () => {
      this.cancelResume(topic, partition);
      this.consumer()?.pause([{ topic, partitions: [partition] }]);
    });
  }

  /** Rewinds a partition of an assignment that ended to its first unfinished record. */
  rewind(topic: string, partition: number, offset: string): void {
    this.safely('rewind after a rebalance', () =>
      this.consumer()?.seek({ topic, partition, offset }),
    );
  }

  /** Stops fetching every partition of `topics` (before a close). */
  pauseTopics(topics: readonly string[]): void {
    this.safely('pause before closing', () =>
      this.consumer()?.pause(topics.map((topic) => ({ topic }))),
    );
  }

  /** Resumes every paused partition, its timers cancelled (a new assignment starts free). */
  resumeAll(): void {
    this.cancelTimers();
    this.stopped.clear();
    const paused = this.consumer()?.paused() ?? [];
    if (paused.length > 0) this.consumer()?.resume(paused);
  }

  /** Cancels every resume timer. */
  cancelTimers(): void {
    for (const { timer } of this.resumeTimers.values()) clearTimeout(timer);
    this.resumeTimers.clear();
  }

  private cancelResume(topic: string, partition: number): void {
    const key = `${topic}:${partition}`;
    clearTimeout(this.resumeTimers.get(key)?.timer);
    this.resumeTimers.delete(key);
  }

  private safely(what: string, action: () => void): void {
    try {
      action();
    } catch (error) {
      this.skipped(what, error);
    }
  }
}
