/**
 * Replaces kafkajs's request-timeout checks. kafkajs 2.2.4 gives every broker connection its
 * own 100 ms interval timer that looks for timed-out requests for as long as the connection is
 * open, whether anything is in flight or not; an app holds several connections (consumer
 * groups, their coordinators, the producer, admin clients), whose timers fire at different
 * moments, and on a small machine each wake-up costs more than the check itself. This uses one
 * shared timer, once a second, that checks every open connection's requests in flight exactly
 * as kafkajs does (timing out those older than their request timeout, 30 s by default, so at
 * most a second late) and forgets a connection once it is closed.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `RequestQueue` this replaces or reads. */
interface RequestQueueInternals {
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  isConnected(): boolean;
  destroy: (this: RequestQueueInternals) => void;
  scheduleRequestTimeoutCheck: (this: RequestQueueInternals) => void;
}

/** Interval of the shared check (kafkajs: 100 ms per connection). */
export const REQUEST_TIMEOUT_CHECK_MS = 1_000;

/** The open connections' queues, checked by the shared timer. */
const queues = new Set<RequestQueueInternals>();
let timer: NodeJS.Timeout | undefined;

/** Times out the requests in flight past their deadline; forgets queues no longer connected. */
export function checkRequestTimeouts(now: number = Date.now()): void {
  for (const queue of queues) {
    for (const request of queue.inflight.values()) {
      if (now - request.sentAt > request.requestTimeout) request.timeoutRequest();
    }
    if (!queue.isConnected()) queue.destroy();
  }
}

/** Replaces kafkajs's per-connection interval: the queue joins the shared check. */
export function scheduleRequestTimeoutCheck(this: RequestQueueInternals): void {
  if (!this.enforceRequestTimeout) return;
  this.destroy();
  queues.add(this);
  if (timer === undefined) {
    timer = setInterval(checkRequestTimeouts, REQUEST_TIMEOUT_CHECK_MS);
    // The connections' sockets keep a process alive, never this timer.
    timer.unref();
  }
}

/** Wraps kafkajs's `destroy` (connection closed): the queue leaves the shared check. */
function leavingCheck(
  destroy: (this: RequestQueueInternals) => void,
): (this: RequestQueueInternals) => void {
  return function (this: RequestQueueInternals): void {
    destroy.call(this);
    queues.delete(this);
    if (queues.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** How many connections the shared timer checks now (for specs). */
export function checkedRequestQueues(): number {
  return queues.size;
}

let applied = false;

/**
 * Installs the replacement once per process, before any client connects
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installRequestTimeoutReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('request timeout check', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const queue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueueInternals };
  queue.prototype.destroy = leavingCheck(queue.prototype.destroy);
  queue.prototype.scheduleRequestTimeoutCheck = scheduleRequestTimeoutCheck;
  applied = true;
}
