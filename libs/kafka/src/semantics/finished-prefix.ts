/** An admitted record as the prefix sees it: its offset, and whether it has finished. */
export interface Admitted {
  readonly offset: bigint;
  readonly done: boolean;
}

/**
 * A partition's admitted records in offset order, from the oldest unfinished one, and the
 * commits of their finished prefix: one request at a time, the latest finished offset sent once
 * the one before it answered (offsets finished meanwhile gather into it).
 */
export class FinishedPrefix<T extends Admitted> {
  private readonly pending: T[] = [];
  /** The offset the finished prefix reaches, and the one last sent to Kafka. */
  private wanted: bigint | undefined;
  private sent: bigint | undefined;
  private committing: Promise<void> | undefined;

  /**
   * @param commit sends a commit of `offset` (the next record to consume); a refusal is the
   *   committer's to retry (a later commit covers its offsets too), so it is not retried here
   */
  constructor(private readonly commit: (offset: string) => Promise<void>) {}

  /** A record admitted after every record added before it. */
  add(record: T): void {
    this.pending.push(record);
  }

  /**
   * The offset after the finished prefix (the next one to commit), or undefined before any
   * record finished.
   */
  finishedBefore(): bigint | undefined {
    return this.wanted;
  }

  /** The first record added that has not finished, if any. */
  firstUnfinished(): T | undefined {
    return this.pending.find((record) => !record.done);
  }

  /** Commits the finished prefix, if it grew; while a commit is on its way, later offsets gather. */
  advance(): void {
    let finished = 0;
    while (finished < this.pending.length && this.pending[finished].done) finished += 1;
    if (finished === 0) return;
    const next = this.pending[finished - 1].offset + 1n;
    this.pending.splice(0, finished);
    if (this.wanted !== undefined && next <= this.wanted) return;
    this.wanted = next;
    this.committing ??= this.commitLoop();
  }

  /** Resolves once no commit is on its way. */
  async committed(): Promise<void> {
    await this.committing;
  }

  /** Forgets the records past the finished prefix (read again after a rewind); commits go on. */
  forget(): void {
    this.pending.length = 0;
  }

  private async commitLoop(): Promise<void> {
    try {
      while (this.wanted !== undefined && this.wanted !== this.sent) {
        const target = this.wanted;
        await this.commit(target.toString()).catch(() => undefined);
        this.sent = target;
      }
    } finally {
      this.committing = undefined;
    }
  }
}
