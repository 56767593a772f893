import type { Counter, LabelValues } from 'prom-client';

/**
 * A counter's counts kept as plain numbers, one per set of label values named by a key of
 * the caller's, and added to the counter when the registry reads it (give the tally to
 * {@link Metrics.counter}). prom-client hashes and validates the labels on every `inc`, also
 * through `labels(...)`, which costs microseconds on a hot path.
 */
export class CounterTally<L extends string> {
  private readonly entries = new Map<string, { labels: LabelValues<L>; count: number }>();

  /** Adds `n` for `key`; `labels` makes its label values the first time the key is seen. */
  add(key: string, labels: () => LabelValues<L>, n = 1): void {
    const entry = this.entries.get(key);
    if (entry) entry.count += n;
    else this.entries.set(key, { labels: labels(), count: n });
  }

  /** Moves the counts into the counter. */
  flush(counter: Counter<L>): void {
    for (const entry of this.entries.values()) {
      if (entry.count === 0) continue;
      counter.inc(entry.labels, entry.count);
      entry.count = 0;
    }
  }
}
