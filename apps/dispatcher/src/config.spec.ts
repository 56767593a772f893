import { ConfigError } from '@app/config';

import { loadDispatcherConfig, retryTiers } from './config';

const KEY = 'q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=';

const REQUIRED = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  SECRETS_ENCRYPTION_KEY: KEY,
};

/** The ConfigError a bad environment raises (fails the test when none is raised). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadDispatcherConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('the configuration was accepted');
}

describe(loadDispatcherConfig.name, () => {
  it('has the documented defaults', () => {
    const config = loadDispatcherConfig(REQUIRED);
    expect(config.app).toBe('dispatcher');
    expect(config.http.port).toBe(8083);
    expect(config.dispatcher).toEqual({
      retryDelaysSeconds: [10, 60, 300, 1200, 3600],
      retryWindowMs: 4 * 3600 * 1000,
      orderingRetryDelaysMs: [1_000, 5_000, 15_000, 30_000],
      requestTimeoutMs: 5000,
      maxInFlight: 1024,
      maxPendingCalls: 20_000,
      maxInFlightPerDestination: 64,
      destinationWaitMs: 500,
      connectionsPerOrigin: 64,
      breaker: {
        failingAfter: 10,
        failureRatio: 0.7,
        minAttempts: 10,
        windowMs: 300_000,
        coolDownMs: 30_000,
        probes: 1,
      },
      partitionsConcurrently: 8,
      maxInFlightPerPartition: 128,
      allowedCidrs: [],
      extraCaFile: '',
      ledgerSuccessSample: 1,
      responseBodyBytes: 2_048,
      secretsKey: KEY,
    });
  });

  it('reads every override, frozen', () => {
    const config = loadDispatcherConfig({
      ...REQUIRED,
      DISPATCHER_PORT: '0',
      DISPATCHER_RETRY_DELAYS: '1s,2s,2m',
      DISPATCHER_RETRY_WINDOW_SECONDS: '30',
      DISPATCHER_ORDERING_RETRY_DELAYS_MS: '20,50,100',
      DISPATCHER_REQUEST_TIMEOUT_MS: '300',
      DISPATCHER_MAX_IN_FLIGHT: '10',
      DISPATCHER_MAX_PENDING_CALLS: '500',
      DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION: '3',
      DISPATCHER_DESTINATION_WAIT_MS: '250',
      DISPATCHER_CONNECTIONS_PER_ORIGIN: '4',
      DISPATCHER_FAILING_AFTER: '2',
      DISPATCHER_BREAKER_FAILURE_RATIO: '0.5',
      DISPATCHER_BREAKER_MIN_ATTEMPTS: '4',
      DISPATCHER_BREAKER_WINDOW_SECONDS: '60',
      DISPATCHER_BREAKER_COOL_DOWN_MS: '1500',
      DISPATCHER_BREAKER_PROBES: '2',
      DISPATCHER_PARTITIONS_CONCURRENTLY: '5',
      DISPATCHER_MAX_IN_FLIGHT_PER_PARTITION: '6',
      DISPATCHER_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      DISPATCHER_EXTRA_CA_FILE: '/etc/ca.pem',
      DISPATCHER_LEDGER_SUCCESS_SAMPLE: '0.25',
      DISPATCHER_RESPONSE_BODY_BYTES: '512',
    });
    expect(config.http.port).toBe(0);
    expect(config.dispatcher).toEqual({
      retryDelaysSeconds: [1, 2, 120],
      retryWindowMs: 30_000,
      orderingRetryDelaysMs: [20, 50, 100],
      requestTimeoutMs: 300,
      maxInFlight: 10,
      maxPendingCalls: 500,
      maxInFlightPerDestination: 3,
      destinationWaitMs: 250,
      connectionsPerOrigin: 4,
      breaker: {
        failingAfter: 2,
        failureRatio: 0.5,
        minAttempts: 4,
        windowMs: 60_000,
        coolDownMs: 1_500,
        probes: 2,
      },
      partitionsConcurrently: 5,
      maxInFlightPerPartition: 6,
      allowedCidrs: ['127.0.0.0/8', '::1/128'],
      extraCaFile: '/etc/ca.pem',
      ledgerSuccessSample: 0.25,
      responseBodyBytes: 512,
      secretsKey: KEY,
    });
    expect(Object.isFrozen(config.dispatcher)).toBe(true);
    expect(Object.isFrozen(config.dispatcher.retryDelaysSeconds)).toBe(true);
    expect(Object.isFrozen(config.dispatcher.allowedCidrs)).toBe(true);
  });

  it('requires the secrets key', () => {
    const withoutKey = {
      KAFKA_BROKERS: REQUIRED.KAFKA_BROKERS,
      DATABASE_URL: REQUIRED.DATABASE_URL,
    };
    expect(configError(withoutKey).message).toContain('SECRETS_ENCRYPTION_KEY');
  });

  it.each([
    ['SECRETS_ENCRYPTION_KEY', 'c2hvcnQta2V5LWhlcmUtc2VjcmV0'],
    ['SECRETS_ENCRYPTION_KEY', `${KEY}extra`],
    ['DISPATCHER_RETRY_DELAYS', '10s,,1m'],
    ['DISPATCHER_RETRY_DELAYS', '0s,7m'],
    ['DISPATCHER_RETRY_DELAYS', '10x'],
    ['DISPATCHER_RETRY_DELAYS', '10s, 1m'],
    ['DISPATCHER_ALLOWED_CIDRS', '10.0.0.1'],
    ['DISPATCHER_ALLOWED_CIDRS', 'intranet.example/8'],
    ['DISPATCHER_ALLOWED_CIDRS', '10.9.0.0/16,'],
    ['DISPATCHER_RETRY_WINDOW_SECONDS', '0'],
    ['DISPATCHER_ORDERING_RETRY_DELAYS_MS', '0,100'],
    ['DISPATCHER_ORDERING_RETRY_DELAYS_MS', '1s'],
    ['DISPATCHER_ORDERING_RETRY_DELAYS_MS', '100,'],
    ['DISPATCHER_REQUEST_TIMEOUT_MS', '99'],
    ['DISPATCHER_REQUEST_TIMEOUT_MS', 'fast'],
    ['DISPATCHER_MAX_IN_FLIGHT', '0'],
    ['DISPATCHER_MAX_PENDING_CALLS', '0'],
    ['DISPATCHER_FAILING_AFTER', '1.5'],
    ['DISPATCHER_BREAKER_FAILURE_RATIO', '1.5'],
    ['DISPATCHER_BREAKER_FAILURE_RATIO', '-1'],
    ['DISPATCHER_BREAKER_MIN_ATTEMPTS', '0'],
    ['DISPATCHER_BREAKER_COOL_DOWN_MS', '50'],
    ['DISPATCHER_BREAKER_PROBES', '0'],
    ['DISPATCHER_PORT', '70000'],
  ])('refuses %s=%s, naming the variable and never the value', (name, value) => {
    const error = configError({ ...REQUIRED, [name]: value });
    expect(error.message).toContain(name);
    expect(error.message).not.toContain(value);
    expect(error.problems.every((problem) => problem.startsWith(name))).toBe(true);
  });
});

describe(retryTiers.name, () => {
  it('lists each distinct delay once, ascending', () => {
    const config = loadDispatcherConfig({
      ...REQUIRED,
      DISPATCHER_RETRY_DELAYS: '1m,10s,1m,60s,1h,5m,1h',
    });
    expect(config.dispatcher.retryDelaysSeconds).toEqual([60, 10, 60, 60, 3600, 300, 3600]);
    expect(retryTiers(config)).toEqual([10, 60, 300, 3600]);
  });

  it('has one tier per default delay', () => {
    expect(retryTiers(loadDispatcherConfig(REQUIRED))).toEqual([10, 60, 300, 1200, 3600]);
  });
});
