/**
 * Wraps kafkajs's `ConnectionPool.getConnectionByRequest` so that a group's JoinGroup and
 * SyncGroup go over the broker's fetch connection, not over the connection of every other
 * request. A broker answers the requests of one connection in order, and holds a JoinGroup
 * until every member joined (or the rebalance timeout): kafkajs 2.2.4 sends commits,
 * heartbeats and leaves over the same connection as the join, so a member stopped during a
 * rebalance could not commit what it finished, nor leave, until the rebalance it was leaving
 * completed, and its next owner handled those records again. While a member joins it does not
 * fetch, so the fetch connection is free then; a join waits behind one fetch's wait at most.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** Kafka's api keys of the requests a broker holds until the group's rebalance completes. */
export const HELD_BY_REBALANCE = new Set([11 /* JoinGroup */, 14 /* SyncGroup */]);

/** The pool's connection of fetches (kafkajs 2.2.4: index 1; every other request: index 0). */
export const FETCH_CONNECTION = 1;

/** The parts of kafkajs's `ConnectionPool` this wraps or reads. */
export interface ConnectionPoolInternals {
  getConnectionByRequest: (
    this: ConnectionPoolInternals,
    protocolRequest: { request: { apiKey: number } },
  ) => Promise<unknown>;
  getConnection: (this: ConnectionPoolInternals, index?: number) => Promise<unknown>;
}

/** Wraps `getConnectionByRequest` of a `ConnectionPool` prototype. */
export function wrapGetConnectionByRequest(prototype: ConnectionPoolInternals): void {
  const getConnectionByRequest = prototype.getConnectionByRequest;
  prototype.getConnectionByRequest = function (this: ConnectionPoolInternals, protocolRequest) {
    if (HELD_BY_REBALANCE.has(protocolRequest.request.apiKey))
      return this.getConnection(FETCH_CONNECTION);
    return getConnectionByRequest.call(this, protocolRequest);
  };
}

let applied = false;

/**
 * Installs the wrapper once per process, before any client exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installJoinConnectionReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('join connection', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pool = require('kafkajs/src/network/connectionPool') as {
    prototype: ConnectionPoolInternals;
  };
  wrapGetConnectionByRequest(pool.prototype);
  applied = true;
}
