/** The kafkajs version whose internals `libs/kafka` replaces in places (`package.json` pins it). */
export const PATCHED_KAFKAJS_VERSION = '2.2.4';

/**
 * Whether the kafkajs installed is the one the replacements were written against: each
 * installs itself only then, and any other version keeps kafkajs's own code.
 */
export function isPatchedKafkajs(): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { version } = require('kafkajs/package.json') as { version: string };
  return version === PATCHED_KAFKAJS_VERSION;
}
