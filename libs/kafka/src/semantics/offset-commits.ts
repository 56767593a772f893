/** A partition's offset to commit: the next record to consume. */
export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

interface Wanted {
  offset: PartitionOffset;
  /** False once the partition's pipeline no longer owns it (a rebalance): not committed. */
  current: () => boolean;
  readonly waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

/** Since when a consumer's commits have been refused, and how often. */
export interface CommitTrouble {
  /** Refused requests in a row, this one included (or, once through, before it). */
  readonly refusals: number;
  /** From the first of them to now. */
  readonly forMs: number;
}

/** Retries of refused commits: `firstMs` after the refusal, doubling up to `maxMs`. */
export interface CommitRetry {
  readonly firstMs: number;
  readonly maxMs: number;
  /** Told of each refused request, with how long commits have been refused. */
  readonly failed?: (
    error: unknown,
    offsets: readonly PartitionOffset[],
    trouble: CommitTrouble,
  ) => void;
  /** Told when a request goes through after refused ones. */
  readonly resumed?: (trouble: CommitTrouble) => void;
  /** The clock of `forMs`. */
  readonly now?: () => number;
}

const DEFAULT_RETRY: CommitRetry = { firstMs: 1_000, maxMs: 30_000 };

/**
 * The offsets a consumer's partitions want committed, gathered for `gatherMs` and sent
 * together in one request, one request at a time. Each partition committed its finished prefix
 * on its own before, a request per partition per round trip: hundreds a second under load,
 * each costing the consumer's thread more than a delivery's own Kafka work. Gathering delays a
 * commit by `gatherMs` at most (plus a request on its way), so a crash may replay that much
 * more; what is committed is still only what finished (at least once).
 *
 * A refused request rejects its committers and is tried again on a timer (see
 * {@link CommitRetry}) until it succeeds, a newer offset of the partition replaces it, or the
 * partition is no longer current: a partition that finished its last records just before a
 * refusal does not keep them uncommitted until it has more.
 */
export class OffsetCommits {
  private readonly wanted = new Map<string, Wanted>();
  private timer: NodeJS.Timeout | undefined;
  private sending = false;
  /** The request on its way (settled, never rejecting), for a flush to wait for. */
  private request: Promise<void> = Promise.resolve();
  /** The delay before the next retry; 0 while the last request succeeded. */
  private retryMs = 0;
  /** False once {@link stopRetrying} was called. */
  private retrying = true;
  /** Refused requests since the last one that went through, and when the first was. */
  private refusals = 0;
  private refusedSince = 0;

  /**
   * @param send commits the offsets in one request (kafkajs `consumer.commitOffsets`)
   * @param gatherMs how long offsets gather before a request goes
   */
  constructor(
    private readonly send: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly gatherMs: number,
    private readonly retry: CommitRetry = DEFAULT_RETRY,
  ) {}

  /**
   * Commits `offset` for its partition with the others gathered, replacing an earlier offset
   * of the partition not sent yet. Resolves once it is committed (or dropped because
   * `current` turned false); rejects when the request failed.
   */
  commit(offset: PartitionOffset, current: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const key = keyOf(offset);
      const entry = this.wanted.get(key);
      if (entry) {
        entry.offset = offset;
        entry.current = current;
        entry.waiters.push({ resolve, reject });
      } else {
        this.wanted.set(key, { offset, current, waiters: [{ resolve, reject }] });
      }
      this.schedule();
    });
  }

  /**
   * Sends what is gathered now, without waiting for the gathering time (e.g. at close, or
   * before a rebalance); with a request on its way, once that one is answered.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sending) {
      await this.request;
      return this.flush();
    }
    if (this.wanted.size === 0) return;
    const batch = [...this.wanted.values()];
    this.wanted.clear();
    const live = batch.filter((entry) => entry.current());
    this.sending = true;
    try {
      if (live.length > 0) {
        const request = this.send(live.map((entry) => entry.offset));
        this.request = request.then(
          () => undefined,
          () => undefined,
        );
        await request;
        this.through();
      }
      this.retryMs = 0;
      for (const entry of batch) for (const waiter of entry.waiters) waiter.resolve();
    } catch (error) {
      this.refused(live, error);
      for (const entry of batch) for (const waiter of entry.waiters) waiter.reject(error);
    } finally {
      this.sending = false;
      if (this.wanted.size > 0) this.schedule();
    }
  }

  /**
   * From now on a refused request is not tried again, and no commit waits for a retry's
   * backoff: for a consumer that is closing, whose last commits must go at once.
   */
  stopRetrying(): void {
    this.retrying = false;
    this.retryMs = 0;
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  /** A request went through: tells of the refusals before it, if any. */
  private through(): void {
    if (this.refusals === 0) return;
    const trouble = { refusals: this.refusals, forMs: this.clock() - this.refusedSince };
    this.refusals = 0;
    this.retry.resumed?.(trouble);
  }

  /** Wants the refused offsets again (unless newer ones came meanwhile), after a backoff. */
  private refused(entries: readonly Wanted[], error: unknown): void {
    const now = this.clock();
    if (this.refusals === 0) this.refusedSince = now;
    this.refusals += 1;
    const trouble = { refusals: this.refusals, forMs: now - this.refusedSince };
    this.retry.failed?.(
      error,
      entries.map((entry) => entry.offset),
      trouble,
    );
    if (!this.retrying) return;
    this.retryMs =
      this.retryMs === 0 ? this.retry.firstMs : Math.min(this.retryMs * 2, this.retry.maxMs);
    for (const entry of entries) {
      const key = keyOf(entry.offset);
      if (!this.wanted.has(key)) this.wanted.set(key, { ...entry, waiters: [] });
    }
  }

  private clock(): number {
    return (this.retry.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.sending) return;
    const delay = Math.max(this.gatherMs, this.retryMs);
    // Unreferenced: a retry due later must not keep a closed consumer's process alive (a close
    // drains its pipelines, whose commits wait for this timer while the consumer is connected).
    this.timer = setTimeout(() => void this.flush(), delay).unref();
  }
}

function keyOf(offset: PartitionOffset): string {
  return `${offset.topic}:${offset.partition}`;
}
