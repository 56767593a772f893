/**
 * Kafka topic names, defined once. Every name is versioned with `.v1` and may carry a
 * deployment prefix (for example `staging.`), so several deployments can share a cluster.
 */

/** The logical topics, before any deployment prefix. */
export const TOPIC = {
  /** One call or a batch body, JSON, published by external producers. */
  ingest: 'sluice.ingest.v1',
  /** Bytes ingest could not accept; header `reason` says why. */
  ingestRejected: 'sluice.ingest.rejected.v1',
  /** One enriched call per record, keyed `sourceId:userKey`. */
  calls: 'sluice.calls.v1',
  /** One outbound webhook body per (call, destination), keyed `destinationId:userKey`. */
  deliveries: 'sluice.deliveries.v1',
  /** Deliveries that will not be attempted again; headers say why. */
  deliveriesDead: 'sluice.deliveries.dead.v1',
  /** One outcome per delivery attempt, for the delivery ledger and deletion receipts. */
  deliveryOutcomes: 'sluice.deliveries.outcomes.v1',
  /**
   * Changes of each destination's circuit breaker in each dispatcher process (and their state
   * again while not closed), keyed by destination id; the admin app keeps the latest of each.
   */
  breakerChanges: 'sluice.breaker.changes.v1',
} as const;

/** Matches a retry delay label such as `10s`, `1m`, `20m` or `1h`. */
const DELAY_LABEL = /^[1-9][0-9]*(s|m|h)$/;

const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600 } as const;

/**
 * The retry tier topic for one fixed delay, e.g. `sluice.deliveries.retry.10s.v1`.
 * @param delaySeconds the tier's delay; written with the largest unit that divides it.
 */
export function retryTopic(delaySeconds: number): string {
  return `sluice.deliveries.retry.${delayLabel(delaySeconds)}.v1`;
}

/** `3600` -> `1h`, `300` -> `5m`, `10` -> `10s`. */
export function delayLabel(delaySeconds: number): string {
  if (!Number.isInteger(delaySeconds) || delaySeconds <= 0) {
    throw new RangeError('a retry delay is a positive whole number of seconds');
  }
  if (delaySeconds % 3600 === 0) return `${delaySeconds / 3600}h`;
  if (delaySeconds % 60 === 0) return `${delaySeconds / 60}m`;
  return `${delaySeconds}s`;
}

/** `10s` -> 10, `5m` -> 300, `1h` -> 3600; throws on anything else. */
export function parseDelayLabel(label: string): number {
  if (!DELAY_LABEL.test(label)) {
    throw new RangeError(`not a delay label (expected e.g. 10s, 5m, 1h): ${label}`);
  }
  const unit = label.slice(-1) as keyof typeof SECONDS_PER_UNIT;
  return Number(label.slice(0, -1)) * SECONDS_PER_UNIT[unit];
}
