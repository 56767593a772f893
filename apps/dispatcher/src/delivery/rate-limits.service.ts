import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';

import { Metrics } from '@app/observability';

import {
  GroupPartitions,
  groupTotal,
  ownedFraction,
  replicaShare,
  TokenBucket,
} from './rate-limit';

/** Longest a waiting delivery sleeps before it looks at its bucket again (a rate may change). */
const MAX_SLEEP_MS = 250;

/** The topics of each consumer group of the dispatcher and their partition count. */
export interface RateLimitOptions {
  /** Partitions per topic that the topics are created with (KAFKA_TOPIC_PARTITIONS). */
  readonly partitionsPerTopic: number;
  /** The logical topics of each consumer group (main topic; retry tiers). */
  readonly groups: readonly (readonly string[])[];
  readonly now?: () => number;
}

export const RATE_LIMIT_OPTIONS = Symbol('RATE_LIMIT_OPTIONS');

/** A destination's bucket, with the limit its rate was computed from. */
interface Limited {
  limitPerSecond: number;
  readonly bucket: TokenBucket;
}

/**
 * Destinations' rate limits on this replica (docs/architecture.md, "Rate limits across
 * replicas"): a token bucket per limited destination whose rate is this replica's share of
 * the limit, recomputed whenever a consumer group's assignment changes. No coordination per
 * delivery: the partitions Kafka assigns decide the shares.
 */
@Injectable()
export class DestinationRateLimits {
  private readonly now: () => number;
  private readonly buckets = new Map<string, Limited>();
  /**
   * Each group's partitions owned now. A group not joined yet owns none but counts in the
   * total, so that no replica's share is computed from part of the partitions.
   */
  private readonly partitions = new Map<string, GroupPartitions>();
  private readonly delayed: Counter<'destination_id'>;

  constructor(
    @Inject(RATE_LIMIT_OPTIONS) private readonly options: RateLimitOptions,
    metrics: Metrics,
  ) {
    this.now = options.now ?? Date.now;
    for (const topics of options.groups) {
      this.partitions.set(groupKey(topics), {
        owned: 0,
        total: options.partitionsPerTopic * topics.length,
      });
    }
    this.delayed = metrics.counter(
      'sluice_dispatcher_rate_limited_total',
      'Times a delivery was held back by its destination rate limit: moved off the main topic, or waiting for a token on a retry tier',
      ['destination_id'],
    );
    metrics.scrapedGauge(
      'sluice_dispatcher_rate_limit_share_ratio',
      "This replica's share of every destination rate limit: the delivery partitions it owns over all",
      () => ownedFraction([...this.partitions.values()]),
    );
  }

  /**
   * The assignment of the consumer group of `topics` changed (`undefined`: it owns nothing for
   * now): every bucket's rate follows the new share.
   */
  assigned(
    topics: readonly string[],
    owned: ReadonlyMap<string, readonly number[]> | undefined,
  ): void {
    const mine = owned ?? new Map<string, readonly number[]>();
    let count = 0;
    for (const topic of topics) count += mine.get(topic)?.length ?? 0;
    const total = groupTotal(this.options.partitionsPerTopic, topics.length, mine);
    this.partitions.set(groupKey(topics), { owned: count, total });
    const now = this.now();
    for (const limited of this.buckets.values()) {
      limited.bucket.setRate(this.share(limited.limitPerSecond), now);
    }
  }

  /**
   * Whether a token of a destination is there now (always, without a limit), without taking it;
   * a false answer was counted as a delayed delivery.
   */
  hasToken(destinationId: string, limitPerSecond: number | null | undefined): boolean {
    const bucket = this.bucketOf(destinationId, limitPerSecond);
    if (bucket === undefined || bucket.waitMs(this.now()) === 0) return true;
    this.delayed.inc({ destination_id: destinationId });
    return false;
  }

  /**
   * Takes a token of a destination now if one is there (always, without a limit); a false
   * answer was counted as a delayed delivery.
   */
  tryTake(destinationId: string, limitPerSecond: number | null | undefined): boolean {
    const bucket = this.bucketOf(destinationId, limitPerSecond);
    if (bucket === undefined || bucket.tryTake(this.now())) return true;
    this.delayed.inc({ destination_id: destinationId });
    return false;
  }

  /** Waits for a token of a destination (none needed without a limit). */
  async take(destinationId: string, limitPerSecond: number | null | undefined): Promise<void> {
    let bucket = this.bucketOf(destinationId, limitPerSecond);
    if (bucket === undefined || bucket.tryTake(this.now())) return;
    this.delayed.inc({ destination_id: destinationId });
    while (bucket !== undefined && !bucket.tryTake(this.now())) {
      await sleep(Math.min(MAX_SLEEP_MS, Math.max(1, bucket.waitMs(this.now()))));
      // The limit may have changed or gone meanwhile (a settings change).
      bucket = this.bucketOf(destinationId, this.buckets.get(destinationId)?.limitPerSecond);
    }
  }

  /** Applies a settings change of a limit: the destination's bucket follows its current limit. */
  private bucketOf(
    destinationId: string,
    limitPerSecond: number | null | undefined,
  ): TokenBucket | undefined {
    const limited = this.buckets.get(destinationId);
    if (limitPerSecond === null || limitPerSecond === undefined) {
      if (limited !== undefined) this.buckets.delete(destinationId);
      return undefined;
    }
    const now = this.now();
    if (limited === undefined) {
      const bucket = new TokenBucket(this.share(limitPerSecond), now);
      this.buckets.set(destinationId, { limitPerSecond, bucket });
      return bucket;
    }
    if (limited.limitPerSecond !== limitPerSecond) {
      limited.limitPerSecond = limitPerSecond;
      limited.bucket.setRate(this.share(limitPerSecond), now);
    }
    return limited.bucket;
  }

  private share(limitPerSecond: number): number {
    return replicaShare(limitPerSecond, [...this.partitions.values()]);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A consumer group's key: its topics. */
function groupKey(topics: readonly string[]): string {
  return topics.join(',');
}
