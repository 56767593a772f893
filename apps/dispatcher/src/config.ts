import { IsInt, IsNumber, IsString, Matches, Max, Min } from 'class-validator';

import { CommonConfig, commonConfig, deepFreeze, readEnv, SealedSecretsEnv } from '@app/config';
import { parseDelayLabel } from '@app/contracts';

import type { BreakerPolicy } from './delivery/circuit-breaker';

/** A comma-separated list of delay labels such as `10s,1m,5m,20m,1h`. */
const DELAY_LADDER = /^[1-9][0-9]*[smh](,[1-9][0-9]*[smh])*$/;
/** A comma-separated list of positive integers (milliseconds). */
const MS_LADDER = /^[1-9][0-9]{0,6}(,[1-9][0-9]{0,6})*$/;
/** A comma-separated list of IPv4 or IPv6 CIDRs (checked in full when the guard is built). */
const CIDR_LIST = /^$|^[0-9A-Fa-f:.]+\/[0-9]{1,3}(,[0-9A-Fa-f:.]+\/[0-9]{1,3})*$/;

/** The dispatcher app's variables: the shared ones plus its own. */
class DispatcherEnv extends SealedSecretsEnv {
  /** HTTP port of the dispatcher app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  DISPATCHER_PORT: number = 8083;

  /**
   * Delays of the retry tiers in order, each a number with `s`, `m` or `h`; the last one
   * repeats until the retry window ends. One topic `sluice.deliveries.retry.<delay>.v1` per
   * distinct delay.
   */
  @Matches(DELAY_LADDER, {
    message: 'DISPATCHER_RETRY_DELAYS must be delays like 10s,1m,5m,20m,1h',
  })
  DISPATCHER_RETRY_DELAYS: string = '10s,1m,5m,20m,1h';

  /**
   * How long after its first attempt a delivery may still be retried, in seconds; one whose
   * next attempt would fall later goes to the dead-letter topic `sluice.deliveries.dead.v1`.
   */
  @IsInt()
  @Min(1)
  @Max(7 * 24 * 3600)
  DISPATCHER_RETRY_WINDOW_SECONDS: number = 4 * 3600;

  /**
   * Ordered delivery's in-place back-off: the waits, in milliseconds, before each new attempt
   * of a call held in its user's lane; the last one repeats until the destination's
   * `maxHoldSeconds` suspends the user's ordering.
   */
  @Matches(MS_LADDER, {
    message: 'DISPATCHER_ORDERING_RETRY_DELAYS_MS must be milliseconds like 1000,5000,15000,30000',
  })
  DISPATCHER_ORDERING_RETRY_DELAYS_MS: string = '1000,5000,15000,30000';

  /**
   * Deadline of one webhook POST (connect, send, response headers and body), in milliseconds;
   * a POST that misses it is retried.
   */
  @IsInt()
  @Min(100)
  @Max(120_000)
  DISPATCHER_REQUEST_TIMEOUT_MS: number = 5_000;

  /** Deliveries in flight at once in one dispatcher process; bounds its memory. */
  @IsInt()
  @Min(1)
  @Max(100_000)
  DISPATCHER_MAX_IN_FLIGHT: number = 1_024;

  /**
   * Most calls one dispatcher process holds with no slot, waiting for their batch request's
   * answer or their ledger outcome's acknowledgement; past it, calls keep their partition's
   * slot until then, so fetching slows down. Bounds its memory when Kafka falls behind.
   */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  DISPATCHER_MAX_PENDING_CALLS: number = 20_000;

  /**
   * Deliveries in flight at once for one destination in one process, so that a slow one
   * cannot take every slot.
   */
  @IsInt()
  @Min(1)
  @Max(10_000)
  DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION: number = 64;

  /**
   * Longest a delivery of the main topic waits for a slot of its destination (at its
   * in-flight bound); then it leaves for the first retry tier, so a slow destination never
   * holds the main topic's partitions. A destination at its bound that has finished nothing
   * for this long is not waited for at all. In milliseconds.
   */
  @IsInt()
  @Min(0)
  @Max(60_000)
  DISPATCHER_DESTINATION_WAIT_MS: number = 500;

  /** Connections kept open to one webhook origin (scheme, host, port). */
  @IsInt()
  @Min(1)
  @Max(10_000)
  DISPATCHER_CONNECTIONS_PER_ORIGIN: number = 64;

  /**
   * Consecutive failed attempts (timeout, connection error, 5xx, 408, 429) that open a
   * destination's circuit breaker in this process: no attempts until its cool-down ends.
   */
  @IsInt()
  @Min(1)
  @Max(10_000)
  DISPATCHER_FAILING_AFTER: number = 10;

  /**
   * Share of failed attempts (0 to 1) within `DISPATCHER_BREAKER_WINDOW_SECONDS` that also
   * opens the breaker, once the window holds `DISPATCHER_BREAKER_MIN_ATTEMPTS` attempts.
   */
  @IsNumber()
  @Min(0.01)
  @Max(1)
  DISPATCHER_BREAKER_FAILURE_RATIO: number = 0.7;

  /** Attempts the breaker's window must hold before its failure share counts. */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  DISPATCHER_BREAKER_MIN_ATTEMPTS: number = 10;

  /** Length of the breaker's sliding window of attempts, in seconds. */
  @IsInt()
  @Min(1)
  @Max(24 * 3600)
  DISPATCHER_BREAKER_WINDOW_SECONDS: number = 300;

  /**
   * How long an open breaker lets no attempt out, in milliseconds; then it is half-open and
   * lets `DISPATCHER_BREAKER_PROBES` attempts out: a success closes it, a failure opens it
   * again for another cool-down.
   */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  DISPATCHER_BREAKER_COOL_DOWN_MS: number = 30_000;

  /** Attempts a half-open breaker lets out at once (its probes). */
  @IsInt()
  @Min(1)
  @Max(100)
  DISPATCHER_BREAKER_PROBES: number = 1;

  /** Partitions of one topic handled at once by this process (main topic and tiers each). */
  @IsInt()
  @Min(1)
  @Max(64)
  DISPATCHER_PARTITIONS_CONCURRENTLY: number = 8;

  /** Deliveries of one partition in flight at once (deliveries of one user key stay in order). */
  @IsInt()
  @Min(1)
  @Max(5_000)
  DISPATCHER_MAX_IN_FLIGHT_PER_PARTITION: number = 128;

  /**
   * CIDRs, comma-separated, that the SSRF guard admits for webhooks although they are
   * loopback, private, link-local, CGNAT, metadata or multicast addresses. Empty admits
   * nothing internal; `npm start` admits loopback (`127.0.0.0/8,::1/128`) unless it is set.
   */
  @Matches(CIDR_LIST, { message: 'DISPATCHER_ALLOWED_CIDRS must be CIDRs like 10.0.0.0/8,::1/128' })
  DISPATCHER_ALLOWED_CIDRS: string = '';

  /**
   * Path of a PEM file of extra CA certificates trusted for webhook HTTPS, beside the system's
   * (Node's `NODE_EXTRA_CA_CERTS` works too). Certificate verification cannot be turned off.
   */
  @IsString()
  DISPATCHER_EXTRA_CA_FILE: string = '';

  /**
   * Share of first-try successes recorded in the delivery ledger. Failures, retries, dead
   * letters, deletes and the success of a delivery that was retried are always recorded;
   * lower it only where the ledger writer cannot keep up with the success rate.
   */
  @IsNumber()
  @Min(0)
  @Max(1)
  DISPATCHER_LEDGER_SUCCESS_SAMPLE: number = 1;

  /**
   * Bytes of a failed attempt's response body kept in the delivery ledger (the start of it, as
   * text); 0 keeps none.
   */
  @IsInt()
  @Min(0)
  @Max(65_536)
  DISPATCHER_RESPONSE_BODY_BYTES: number = 2_048;
}

/** The dispatcher app's typed, frozen configuration. */
export interface DispatcherConfig extends CommonConfig {
  readonly dispatcher: {
    /** Retry delays in seconds, in ladder order; the last repeats. */
    readonly retryDelaysSeconds: readonly number[];
    readonly retryWindowMs: number;
    /** Ordered delivery's in-place back-off in ms, in order; the last repeats. */
    readonly orderingRetryDelaysMs: readonly number[];
    readonly requestTimeoutMs: number;
    readonly maxInFlight: number;
    readonly maxPendingCalls: number;
    readonly maxInFlightPerDestination: number;
    readonly destinationWaitMs: number;
    readonly connectionsPerOrigin: number;
    /** The circuit breaker of each destination, per process. */
    readonly breaker: BreakerPolicy;
    readonly partitionsConcurrently: number;
    readonly maxInFlightPerPartition: number;
    readonly allowedCidrs: readonly string[];
    /** Empty when none. */
    readonly extraCaFile: string;
    /** Share of successful deliveries recorded in the ledger (0 to 1). */
    readonly ledgerSuccessSample: number;
    /** Bytes of a failed attempt's response body kept for the ledger. */
    readonly responseBodyBytes: number;
    readonly secretsKey: string;
  };
}

/** Reads and validates the dispatcher app's configuration; the only reader of `process.env`. */
export function loadDispatcherConfig(env: NodeJS.ProcessEnv = process.env): DispatcherConfig {
  const vars = readEnv(DispatcherEnv, env);
  return deepFreeze({
    ...commonConfig('dispatcher', vars, vars.DISPATCHER_PORT),
    dispatcher: {
      retryDelaysSeconds: vars.DISPATCHER_RETRY_DELAYS.split(',').map(parseDelayLabel),
      retryWindowMs: vars.DISPATCHER_RETRY_WINDOW_SECONDS * 1000,
      orderingRetryDelaysMs: vars.DISPATCHER_ORDERING_RETRY_DELAYS_MS.split(',').map(Number),
      requestTimeoutMs: vars.DISPATCHER_REQUEST_TIMEOUT_MS,
      maxInFlight: vars.DISPATCHER_MAX_IN_FLIGHT,
      maxPendingCalls: vars.DISPATCHER_MAX_PENDING_CALLS,
      maxInFlightPerDestination: vars.DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION,
      destinationWaitMs: vars.DISPATCHER_DESTINATION_WAIT_MS,
      connectionsPerOrigin: vars.DISPATCHER_CONNECTIONS_PER_ORIGIN,
      breaker: {
        failingAfter: vars.DISPATCHER_FAILING_AFTER,
        failureRatio: vars.DISPATCHER_BREAKER_FAILURE_RATIO,
        minAttempts: vars.DISPATCHER_BREAKER_MIN_ATTEMPTS,
        windowMs: vars.DISPATCHER_BREAKER_WINDOW_SECONDS * 1000,
        coolDownMs: vars.DISPATCHER_BREAKER_COOL_DOWN_MS,
        probes: vars.DISPATCHER_BREAKER_PROBES,
      },
      partitionsConcurrently: vars.DISPATCHER_PARTITIONS_CONCURRENTLY,
      maxInFlightPerPartition: vars.DISPATCHER_MAX_IN_FLIGHT_PER_PARTITION,
      allowedCidrs:
        vars.DISPATCHER_ALLOWED_CIDRS === '' ? [] : vars.DISPATCHER_ALLOWED_CIDRS.split(','),
      extraCaFile: vars.DISPATCHER_EXTRA_CA_FILE,
      ledgerSuccessSample: vars.DISPATCHER_LEDGER_SUCCESS_SAMPLE,
      responseBodyBytes: vars.DISPATCHER_RESPONSE_BODY_BYTES,
      secretsKey: vars.SECRETS_ENCRYPTION_KEY,
    },
  });
}

/** The distinct retry delays, ascending: one tier topic each. */
export function retryTiers(config: DispatcherConfig): number[] {
  return [...new Set(config.dispatcher.retryDelaysSeconds)].sort((a, b) => a - b);
}
