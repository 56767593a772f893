/**
 * Wraps kafkajs's consumer group `fetch` so that each fetch waits on the broker as long as the
 * transports of its group ask at that moment, not one fixed time. kafkajs 2.2.4 reads the wait
 * from the group's `maxWaitTime` at every fetch (and sleeps that long when every partition is
 * paused), and a partition resumed meanwhile is fetched only once that wait is over. A long
 * wait makes an idle consumer cheap; a short one lets a held partition flow again at once.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `ConsumerGroup` this wraps or writes. */
export interface FetchingGroupInternals {
  groupId: string;
  /** What the next fetch waits on the broker (and sleeps with every partition paused), ms. */
  maxWaitTime: number;
  fetch: (this: FetchingGroupInternals, nodeId: number) => Promise<unknown>;
}

/** The waits asked for, by group id: one per transport of that group in this process. */
const asked = new Map<string, Set<() => number>>();

/**
 * Lets `wait` set the fetch wait of the consumer group `groupId` before each of its fetches
 * (several transports of one group in a process: the shortest wins).
 * @returns a function that stops asking
 */
export function askFetchWait(groupId: string, wait: () => number): () => void {
  let waits = asked.get(groupId);
  if (!waits) asked.set(groupId, (waits = new Set()));
  waits.add(wait);
  return () => {
    waits.delete(wait);
    if (waits.size === 0 && asked.get(groupId) === waits) asked.delete(groupId);
  };
}

/** The wait asked for `groupId` now, or undefined when no transport asks. */
export function fetchWaitOf(groupId: string): number | undefined {
  const waits = asked.get(groupId);
  if (!waits) return undefined;
  let shortest: number | undefined;
  for (const wait of waits) shortest = Math.min(shortest ?? Infinity, wait());
  return shortest;
}

/** Wraps `fetch` of a `ConsumerGroup` prototype. */
export function wrapGroupFetch(prototype: FetchingGroupInternals): void {
  const fetch = prototype.fetch;
  prototype.fetch = function (this: FetchingGroupInternals, nodeId: number): Promise<unknown> {
    const wait = fetchWaitOf(this.groupId);
    if (wait !== undefined) this.maxWaitTime = wait;
    return fetch.call(this, nodeId);
  };
}

let applied = false;

/**
 * Installs the wrapper once per process, before any consumer exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installFetchWaitReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('consumer fetch wait', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const group = require('kafkajs/src/consumer/consumerGroup') as {
    prototype: FetchingGroupInternals;
  };
  wrapGroupFetch(group.prototype);
  applied = true;
}
