import {
  assertPinnedKafkajs,
  installedKafkajsVersion,
  KafkajsVersionError,
  PINNED_KAFKAJS_VERSION,
} from './kafkajs-version';

describe(assertPinnedKafkajs.name, () => {
  it('passes the pinned version, which is the one installed', () => {
    expect(installedKafkajsVersion()).toBe(PINNED_KAFKAJS_VERSION);
    expect(() => assertPinnedKafkajs('request queue', PINNED_KAFKAJS_VERSION)).not.toThrow();
  });

  it('refuses any other version with a stable code and both versions named', () => {
    for (const found of ['2.2.3', '2.2.5', '2.3.0', '3.0.0', '2.2.4-beta.1']) {
      let thrown: unknown;
      try {
        assertPinnedKafkajs('Fetch v11 response decoder', found);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(KafkajsVersionError);
      const error = thrown as KafkajsVersionError;
      expect(error.code).toBe('KAFKAJS_VERSION_UNSUPPORTED');
      expect(error.message).toContain(`kafkajs ${found} is installed`);
      expect(error.message).toContain(`written for kafkajs ${PINNED_KAFKAJS_VERSION}`);
      expect(error.message).toContain('Fetch v11 response decoder');
      expect(error.message).toContain('docs/kafkajs-replacements.md');
    }
  });
});
