import { Logger } from '@nestjs/common';

import type { UsageCount } from '@app/settings';

const DAY_MS = 86_400_000;

/**
 * Counts accepted calls per source and UTC day in memory and hands the sums to `store` in
 * batches (one statement per flush, never a row per call). A flush that fails puts its
 * counts back, to be stored with the next one. Counts not yet flushed are lost only if the
 * process dies without shutting down.
 */
export class UsageCounter {
  private readonly logger = new Logger(UsageCounter.name);
  private counts = new Map<string, { sourceId: string; day: string; calls: number }>();
  private flushing?: Promise<void>;
  /** Today's date (UTC, `YYYY-MM-DD`) and the span of ms it covers, formatted once a day. */
  private day = { name: '', from: 0, until: 0 };

  constructor(
    private readonly store: (counts: readonly UsageCount[]) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds `calls` accepted calls of `sourceId` to today's (UTC) count. */
  add(sourceId: string, calls: number): void {
    const day = this.today();
    const key = `${sourceId}|${day}`;
    const entry = this.counts.get(key);
    if (entry) entry.calls += calls;
    else this.counts.set(key, { sourceId, day, calls });
  }

  /** Stores what was counted since the last flush; one flush at a time. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.counts.size === 0) return;
    const taken = this.counts;
    this.counts = new Map();
    this.flushing = this.store([...taken.values()])
      .catch((error: unknown) => {
        for (const entry of taken.values()) this.putBack(entry);
        this.logger.warn(`usage flush failed, kept for the next one: ${String(error)}`);
      })
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  /** Calls counted and not yet stored. */
  pending(): number {
    let sum = 0;
    for (const entry of this.counts.values()) sum += entry.calls;
    return sum;
  }

  private today(): string {
    const now = this.now();
    if (now < this.day.from || now >= this.day.until) {
      const from = Math.floor(now / DAY_MS) * DAY_MS;
      this.day = { name: new Date(from).toISOString().slice(0, 10), from, until: from + DAY_MS };
    }
    return this.day.name;
  }

  private putBack(entry: { sourceId: string; day: string; calls: number }): void {
    const key = `${entry.sourceId}|${entry.day}`;
    const current = this.counts.get(key);
    if (current) current.calls += entry.calls;
    else this.counts.set(key, { ...entry });
  }
}
