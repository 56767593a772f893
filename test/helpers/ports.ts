/** The lowest port a test's own server is given. */
const LOWEST = 20_000;
/**
 * Where Linux's default ephemeral range starts (32768 to 60999): a port there may be the local
 * port of an outgoing connection (any test's client), and a server then fails to bind it.
 */
const EPHEMERAL_START = 32_768;

/**
 * The first of `count` consecutive loopback ports, at random below the ephemeral range, for a
 * server a test starts on ports it must know beforehand (a broker names its ports in its
 * configuration).
 */
export function randomPorts(count: number): number {
  return LOWEST + Math.floor(Math.random() * (EPHEMERAL_START - LOWEST - count));
}
