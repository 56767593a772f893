/**
 * kafkajs 2.2.4's request queue re-arms a timer after every check of its pending requests,
 * even when none is pending and nothing is throttled; the delay is then negative, which
 * Node runs after 1 ms (and Node 24 warns about: `TimeoutNegativeWarning`). Every broker
 * connection so spins a 1 ms timer for ever: an idle dispatcher used about 6% of a core.
 * This replaces that one method: a timer only while requests wait, at the end of a throttle
 * or after a short interval, as kafkajs intends. A push or a response checks the queue anyway.
 */

/** The parts of kafkajs's `RequestQueue` the fix touches. */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's own interval between checks while requests wait unthrottled. */
const CHECK_PENDING_INTERVAL_MS = 10;

/** Schedules the next check of pending requests only when one is waiting. */
export function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  const delay = untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_INTERVAL_MS;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
}

let applied = false;

/** Installs the fix once per process (the connection does, before any client exists). */
export function fixRequestQueueIdleLoop(): void {
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const queue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueueInternals };
  queue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  applied = true;
}
