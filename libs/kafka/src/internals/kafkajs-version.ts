/**
 * The kafkajs version whose internals `libs/kafka` replaces in places; `package.json` pins it
 * exactly. docs/kafkajs-replacements.md says what to do when upgrading it.
 */
export const PINNED_KAFKAJS_VERSION = '2.2.4';

/** The version of the kafkajs package that `require` finds. */
export function installedKafkajsVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { version } = require('kafkajs/package.json') as { version: string };
  return version;
}

/**
 * Thrown at start-up when a replacement of kafkajs internals meets a kafkajs other than the
 * one it was written against: it installs nothing, and the app does not start.
 */
export class KafkajsVersionError extends Error {
  readonly code = 'KAFKAJS_VERSION_UNSUPPORTED';

  constructor(
    /** Which replacement refused, e.g. `request queue`. */
    readonly replacement: string,
    /** The kafkajs version found. */
    readonly found: string,
  ) {
    super(
      `libs/kafka's ${replacement} replacement was written for kafkajs ${PINNED_KAFKAJS_VERSION} ` +
        `but kafkajs ${found} is installed; it refuses to install (see docs/kafkajs-replacements.md: ` +
        `check each replacement against the new kafkajs, then update PINNED_KAFKAJS_VERSION)`,
    );
    this.name = KafkajsVersionError.name;
  }
}

/**
 * The one version check of every replacement, before it touches kafkajs.
 * @throws {KafkajsVersionError} when `found` is not {@link PINNED_KAFKAJS_VERSION}
 */
export function assertPinnedKafkajs(replacement: string, found: string): void {
  if (found !== PINNED_KAFKAJS_VERSION) throw new KafkajsVersionError(replacement, found);
}
