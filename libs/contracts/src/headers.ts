/**
 * Kafka header names, defined once. Routing facts travel in headers so that no consumer
 * after ingest has to parse a record's body (docs/architecture.md, "Topics and records").
 */
export const HEADER = {
  /** Why a record was rejected or dead-lettered (a stable code). */
  reason: 'reason',
  /** The source a call belongs to. */
  sourceId: 'sluice-source-id',
  /** The call type: track, page, screen, identify, group, alias or delete. */
  callType: 'sluice-call-type',
  /** The call's messageId. */
  messageId: 'sluice-message-id',
  /** Integrations verdicts read at ingest (JSON). */
  integrations: 'sluice-integrations',
  /** The destination a delivery is for. */
  destinationId: 'sluice-destination-id',
  /** The attempt about to be made (1 for the first). */
  attempt: 'sluice-attempt',
  /** When the first attempt was made, epoch milliseconds. */
  firstAttemptAt: 'sluice-first-attempt-at',
  /** When a record may be handled, epoch milliseconds; consumers pause until then. */
  dueAt: 'sluice-due-at',
  /** The webhook ids a retry still covers (comma-separated). */
  webhookIds: 'sluice-webhook-ids',
  /** The write key of a record on the Kafka ingress topic (set by external producers). */
  writeKey: 'sluice-write-key',
  /** The HTTP status of the last attempt, when there was one. */
  lastStatus: 'sluice-last-status',
  /** When the last attempt was made, epoch milliseconds. */
  lastAttemptAt: 'sluice-last-attempt-at',
  /** A track call's event, or a page's or screen's name (for the delivery ledger). */
  event: 'sluice-event',
  /** The call's `userId`, when it has one (for the delivery ledger's search by user). */
  userId: 'sluice-user-id',
  /** The call's `anonymousId`, when it has one (for the delivery ledger's search by user). */
  anonymousId: 'sluice-anonymous-id',
  /** The delivery's id, when it is not derived from its destination and message id (replays). */
  deliveryId: 'sluice-delivery-id',
  /** The id of the delivery a replay repeats. */
  replayOf: 'sluice-replay-of',
  /**
   * On `sluice.deliveries.outcomes.v1`: how many outcomes a record holds (its value a JSON
   * array); absent on a record of one outcome (a JSON object, as for delete notifications).
   */
  outcomeCount: 'sluice-outcome-count',
  /**
   * W3C trace context of the span that produced the record, when traces are on: the call's
   * request (or ingress record), its routing, or the delivery attempt before a retry.
   */
  traceparent: 'traceparent',
} as const;
