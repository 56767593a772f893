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

/**
 * The offsets a consumer's partitions want committed, gathered for `gatherMs` and sent
 * together in one request, one request at a time. Each partition committed its finished prefix
 * on its own before, a request per partition per round trip: hundreds a second under load,
 * each costing the consumer's thread more than a delivery's own Kafka work. Gathering delays a
 * commit by `gatherMs` at most (plus a request on its way), so a crash may replay that much
 * more; what is committed is still only what finished (at least once).
 */
export class OffsetCommits {
  private readonly wanted = new Map<string, Wanted>();
  private timer: NodeJS.Timeout | undefined;
  private sending = false;

  /**
   * @param send commits the offsets in one request (kafkajs `consumer.commitOffsets`)
   * @param gatherMs how long offsets gather before a request goes
   */
  constructor(
    private readonly send: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly gatherMs: number,
  ) {}

  /**
   * Commits `offset` for its partition with the others gathered, replacing an earlier offset
   * of the partition not sent yet. Resolves once it is committed (or dropped because
   * `current` turned false); rejects when the request failed.
   */
  commit(offset: PartitionOffset, current: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const key = `${offset.topic}:${offset.partition}`;
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

  /** Sends what is gathered now, without waiting for the gathering time (e.g. at close). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sending || this.wanted.size === 0) return;
    const batch = [...this.wanted.values()];
    this.wanted.clear();
    const live = batch.filter((entry) => entry.current());
    this.sending = true;
    try {
      if (live.length > 0) await this.send(live.map((entry) => entry.offset));
      for (const entry of batch) for (const waiter of entry.waiters) waiter.resolve();
    } catch (error) {
      for (const entry of batch) for (const waiter of entry.waiters) waiter.reject(error);
    } finally {
      this.sending = false;
      if (this.wanted.size > 0) this.schedule();
    }
  }

  private schedule(): void {
    if (this.timer !== undefined || this.sending) return;
    this.timer = setTimeout(() => void this.flush(), this.gatherMs);
  }
}
