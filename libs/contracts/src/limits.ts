/** The most bytes one call's UTF-8 JSON may have (32 KB). */
export const MAX_CALL_BYTES = 32_768;

/** The most bytes a request body may have after inflating (500 KB). */
export const MAX_REQUEST_BYTES = 512_000;

/** The most webhook URLs one destination may have. */
export const MAX_WEBHOOKS_PER_DESTINATION = 5;

/** The most static headers one webhook entry may have. */
export const MAX_HEADERS_PER_WEBHOOK = 5;

/**
 * The most levels of objects and arrays one call may nest, the call object itself being level
 * 1. Deeper calls are refused before anything serializes them: `JSON.stringify` recurses, and
 * a few thousand levels overflow the stack.
 */
export const MAX_CALL_DEPTH = 64;

/** The most browser origins one source's allow-list may hold (none: every origin). */
export const MAX_ALLOWED_ORIGINS_PER_SOURCE = 50;

/**
 * The most webhook destinations one source may have, enforced by the admin API and by the
 * database (a slot 0-19 per destination, unique per source).
 */
export const MAX_DESTINATIONS_PER_SOURCE = 20;

/**
 * The highest rate limit a destination may have, in deliveries a second (the lowest is 1; no
 * limit is null). Enforced by the admin API and by the database.
 */
export const MAX_DESTINATION_RATE_LIMIT_PER_SECOND = 10_000;

/**
 * A batching destination's bounds (docs/api.md, "Batched delivery"): calls per request (1 to
 * 4,000, as Segment's Webhooks (Actions) batch allows; 100 by default), bytes of a request's
 * body and milliseconds a batch waits to fill. Enforced by the admin API and by the database.
 */
export const BATCH_LIMITS = {
  maxCalls: { min: 1, max: 4_000, default: 100 },
  maxBytes: { min: 1_024, max: 16_777_216, default: 1_048_576 },
  maxWaitMs: { min: 0, max: 60_000, default: 1_000 },
} as const;

/**
 * An ordered destination's bounds (docs/api.md, "Ordered delivery"): how many calls of one
 * user may wait behind its retrying call, and how long that call may hold them, before the
 * user's ordering is suspended. Enforced by the admin API and by the database.
 */
export const ORDERING_LIMITS = {
  maxPendingCalls: { min: 1, max: 1_000, default: 100 },
  maxHoldSeconds: { min: 1, max: 3_600, default: 600 },
} as const;
