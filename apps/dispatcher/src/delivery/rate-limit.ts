/**
 * How many seconds of its share a replica's bucket holds at most (at least one token): small,
 * so that all replicas' buckets together add little to a second's deliveries at the receiver.
 */
export const BURST_SECONDS = 0.02;

/**
 * The part of its share a replica spends: a little below, so that the timing jitter of
 * several replicas' requests (and of the network) does not push a second at the receiver over
 * the limit. A limit is a ceiling; sending slightly under it is what the receiver asked for.
 */
export const RATE_HEADROOM = 0.95;

/** The partitions of the topics one consumer group of this replica reads. */
export interface GroupPartitions {
  /** Partitions of the group's topics assigned to this replica now. */
  readonly owned: number;
  /** Partitions of the group's topics in all. */
  readonly total: number;
}

/**
 * This replica's share of a destination's limit (deliveries a second): the limit times the
 * fraction of the delivery partitions (main topic and retry tiers together) it owns, times
 * {@link RATE_HEADROOM}. Every partition is owned by one replica at a time, so the shares of
 * all replicas add up to less than the limit. A replica that owns nothing (between
 * rebalances) gets nothing.
 */
export function replicaShare(limitPerSecond: number, groups: readonly GroupPartitions[]): number {
  return limitPerSecond * RATE_HEADROOM * ownedFraction(groups);
}

/** The fraction of the delivery partitions (all groups together) this replica owns, 0 to 1. */
export function ownedFraction(groups: readonly GroupPartitions[]): number {
  const owned = groups.reduce((sum, g) => sum + g.owned, 0);
  const total = groups.reduce((sum, g) => sum + g.total, 0);
  if (total <= 0 || owned <= 0) return 0;
  return Math.min(owned, total) / total;
}

/**
 * Partitions of a group's topics in all: the configured count per topic, or more when an owned
 * partition's number shows a topic has more (partitions added by hand), so that a share is
 * never computed against too small a total.
 */
export function groupTotal(
  partitionsPerTopic: number,
  topics: number,
  owned: ReadonlyMap<string, readonly number[]>,
): number {
  let total = partitionsPerTopic * topics;
  for (const partitions of owned.values()) {
    const highest = partitions.length === 0 ? -1 : Math.max(...partitions);
    if (highest >= partitionsPerTopic) total += highest + 1 - partitionsPerTopic;
  }
  return total;
}

/**
 * A token bucket with an injected clock (epoch ms passed in): `ratePerSecond` tokens a second,
 * holding at most `capacity` (so at most capacity + rate x T tokens are taken in any T
 * seconds). A rate of 0 gives no tokens.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private rate: number;
  private capacity: number;

  constructor(ratePerSecond: number, now: number) {
    this.rate = ratePerSecond;
    this.capacity = bucketCapacity(ratePerSecond);
    // One token, not a full bucket: a new bucket must not add a burst; none at a rate of 0.
    this.tokens = ratePerSecond > 0 ? 1 : 0;
    this.updatedAt = now;
  }

  /** The rate now; changing it keeps the tokens gathered so far (capped by the new capacity). */
  setRate(ratePerSecond: number, now: number): void {
    if (ratePerSecond === this.rate) return;
    this.refill(now);
    this.rate = ratePerSecond;
    this.capacity = bucketCapacity(ratePerSecond);
    this.tokens = Math.min(this.tokens, this.capacity);
  }

  get ratePerSecond(): number {
    return this.rate;
  }

  /** Takes a token if one is there. */
  tryTake(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is there (0: now; Infinity at a rate of 0). */
  waitMs(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) return 0;
    if (this.rate <= 0) return Infinity;
    return Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  private refill(now: number): void {
    const elapsedMs = Math.max(0, now - this.updatedAt);
    this.tokens = Math.min(this.capacity, this.tokens + (elapsedMs * this.rate) / 1000);
    this.updatedAt = now;
  }
}

/** One token, or {@link BURST_SECONDS} of the rate when that is more. */
export function bucketCapacity(ratePerSecond: number): number {
  return Math.max(1, ratePerSecond * BURST_SECONDS);
}
