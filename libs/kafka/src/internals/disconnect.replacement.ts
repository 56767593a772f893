/**
 * Wraps kafkajs's `Connection.disconnect` so that a connection whose socket never connected
 * (refused, or destroyed by an error) does not `unref` it. Node's `Socket.unref` on a socket
 * without a handle waits for a `connect` event by adding a listener, and a refused socket never
 * connects: while a broker is down, kafkajs disconnects the same failed connection again and
 * again (metadata refreshes, retries), and the eleventh listener printed
 * `MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 connect
 * listeners added to [Socket]` in the apps' logs.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `Connection` this wraps or reads. */
export interface ConnectionInternals {
  socket: { readonly destroyed: boolean } | null;
  disconnect: (this: ConnectionInternals) => Promise<boolean>;
}

/** Wraps `disconnect` of a `Connection` prototype. */
export function wrapDisconnect(prototype: ConnectionInternals): void {
  const disconnect = prototype.disconnect;
  prototype.disconnect = function (this: ConnectionInternals): Promise<boolean> {
    // Nothing to end or unref on a destroyed socket; `connect` makes a new one.
    if (this.socket?.destroyed) this.socket = null;
    return disconnect.call(this);
  };
}

let applied = false;

/**
 * Installs the wrapper once per process, before any client exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installDisconnectReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('connection disconnect', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const connection = require('kafkajs/src/network/connection') as {
    prototype: ConnectionInternals;
  };
  wrapDisconnect(connection.prototype);
  applied = true;
}
