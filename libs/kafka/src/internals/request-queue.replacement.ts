/**
 * Replaces one method of kafkajs's request queue. kafkajs 2.2.4 re-arms a timer after every
 * check of its pending requests, even when none is pending and nothing is throttled; the delay
 * is then negative, which Node runs after 1 ms (and Node 24 warns about:
 * `TimeoutNegativeWarning`), so every broker connection spins a 1 ms timer for ever and an
 * idle app still uses CPU. This arms a timer only while requests wait: at the end of a throttle
 * or after kafkajs's own interval. A push or a response checks the queue anyway.
 * docs/kafkajs-replacements.md has the measured gain.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `RequestQueue` this replaces or reads. */
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

/**
 * Installs the replacement once per process, before any client exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installRequestQueueReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('request queue', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const queue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueueInternals };
  queue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  applied = true;
}
