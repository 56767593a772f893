import { IsInt, Matches, Max, Min } from 'class-validator';

import { BaseEnv } from './base.env';
import { commonConfig } from './common';
import { ConfigError, readEnv } from './env';

class ExampleEnv extends BaseEnv {
  @IsInt()
  @Min(1)
  @Max(65_535)
  EXAMPLE_PORT: number = 8080;

  @Matches(/^[a-z]+$/)
  EXAMPLE_NAME = 'abc';
}

const REQUIRED = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

describe(readEnv.name, () => {
  it('applies defaults and converts numbers', () => {
    const env = readEnv(ExampleEnv, { ...REQUIRED, EXAMPLE_PORT: '9000' });
    expect(env.EXAMPLE_PORT).toBe(9000);
    expect(env.EXAMPLE_NAME).toBe('abc');
    expect(env.KAFKA_TOPIC_PARTITIONS).toBe(6);
  });

  it('treats an empty variable as unset', () => {
    expect(readEnv(ExampleEnv, { ...REQUIRED, EXAMPLE_NAME: '' }).EXAMPLE_NAME).toBe('abc');
  });

  it('names each bad variable and its rule, never the value', () => {
    const secretLooking = 'postgresql-password-hunter2';
    let error: unknown;
    try {
      readEnv(ExampleEnv, {
        KAFKA_BROKERS: secretLooking,
        EXAMPLE_PORT: '70000',
        EXAMPLE_NAME: 'NOT-lower',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of ['KAFKA_BROKERS', 'DATABASE_URL', 'EXAMPLE_PORT (max)', 'EXAMPLE_NAME']) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain(secretLooking);
    expect(message).not.toContain('NOT-lower');
    expect(message).not.toContain('70000');
  });

  it('refuses a number that is not one', () => {
    expect(() => readEnv(ExampleEnv, { ...REQUIRED, EXAMPLE_PORT: 'eighty' })).toThrow(
      /EXAMPLE_PORT \(isInt\)/,
    );
  });
});

describe(commonConfig.name, () => {
  it('maps shared variables to a frozen typed object', () => {
    const config = commonConfig('router', readEnv(ExampleEnv, REQUIRED), 8082);
    expect(config.kafka.brokers).toEqual(['127.0.0.1:9092']);
    expect(config.kafka.clientId).toBe('sluice-router');
    expect(config.kafka.retentionMs).toBe(168 * 3_600_000);
    expect(Object.isFrozen(config.kafka)).toBe(true);
  });
});

describe('readEnv with inherited variables', () => {
  it('converts numbers declared on the base class', () => {
    const env = readEnv(ExampleEnv, { ...REQUIRED, KAFKA_TOPIC_PARTITIONS: '2' });
    expect(env.KAFKA_TOPIC_PARTITIONS).toBe(2);
  });
});
