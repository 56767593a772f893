import { ConfigError } from '@app/config';

import { loadRouterConfig } from './config';

const REQUIRED = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

describe(loadRouterConfig.name, () => {
  it('has defaults for the consumer', () => {
    expect(loadRouterConfig(REQUIRED).router).toEqual({
      partitionsConcurrently: 3,
      maxInFlightPerPartition: 64,
      dedupWindowMs: 900_000,
    });
  });

  it('reads the consumer variables', () => {
    const config = loadRouterConfig({
      ...REQUIRED,
      ROUTER_PARTITIONS_CONCURRENTLY: '6',
      ROUTER_MAX_IN_FLIGHT: '256',
      ROUTER_DEDUP_WINDOW_SECONDS: '0',
    });
    expect(config.router).toEqual({
      partitionsConcurrently: 6,
      maxInFlightPerPartition: 256,
      dedupWindowMs: 0,
    });
    expect(Object.isFrozen(config.router)).toBe(true);
  });

  it.each([
    ['ROUTER_PARTITIONS_CONCURRENTLY', '0'],
    ['ROUTER_PARTITIONS_CONCURRENTLY', 'many'],
    ['ROUTER_MAX_IN_FLIGHT', '0'],
    ['ROUTER_MAX_IN_FLIGHT', '1.5'],
    ['ROUTER_DEDUP_WINDOW_SECONDS', '-1'],
    ['ROUTER_DEDUP_WINDOW_SECONDS', '999999999'],
  ])('refuses %s=%s, naming the variable and not the value', (name, value) => {
    expect(() => loadRouterConfig({ ...REQUIRED, [name]: value })).toThrow(ConfigError);
    expect(() => loadRouterConfig({ ...REQUIRED, [name]: value })).toThrow(name);
  });
});
