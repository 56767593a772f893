import { IsInt, Matches, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, deepFreeze, readEnv } from '@app/config';

/** The ingest app's variables: the shared ones plus its own. */
class IngestEnv extends BaseEnv {
  /** HTTP port of the tracking API (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  INGEST_PORT: number = 8080;

  /**
   * Proxies whose `X-Forwarded-For` header gives the client's address: addresses or CIDRs,
   * comma-separated. Empty trusts none: the connection's address is the client's.
   */
  @Matches(/^[0-9A-Fa-f.:/]*(,[0-9A-Fa-f.:/]+)*$/, {
    message: 'INGEST_TRUSTED_PROXIES must be addresses or CIDRs separated by commas',
  })
  INGEST_TRUSTED_PROXIES: string = '';

  /**
   * The address browsers and apps reach this ingest at (scheme, host, optional port and path
   * prefix, no trailing slash). The settings document that Segment's browser and mobile
   * libraries fetch points them at it. Empty: the scheme and `Host` of each settings request
   * (behind a proxy, the scheme from `X-Forwarded-Proto` of a trusted proxy), fine for a
   * local run; set it in production.
   * @example https://ingest.example.com
   */
  @Matches(/^(https?:\/\/[^\s/?#@]+(\/[^\s?#]*[^\s?#/])?)?$/, {
    message: 'INGEST_PUBLIC_URL must be an http or https URL without query or trailing slash',
  })
  INGEST_PUBLIC_URL: string = '';

  /**
   * Longest wait for Kafka's acknowledgement of a tracking request's calls, in milliseconds;
   * the request is then answered 503 (clients retry). Below the 10 s request timeout of
   * Sluice's and Segment's Node client libraries, so a client gets the 503, not its own timeout.
   */
  @IsInt()
  @Min(100)
  @Max(120_000)
  INGEST_PRODUCE_TIMEOUT_MS: number = 8_000;

  /**
   * Longest a tracking request's calls wait for others to share their produce request, in
   * milliseconds; the producer's `lingerRecords` calls waiting (libs/kafka) end it early. It
   * adds up to this much latency at a moderate rate, where it gathers calls into one request
   * that the router and the dispatcher then fetch, route and deliver as one batch; under load
   * calls wait for the requests in flight anyway. 0 sends at once.
   */
  @IsInt()
  @Min(0)
  @Max(1_000)
  INGEST_PRODUCE_LINGER_MS: number = 20;

  /**
   * How often each ingest process adds its usage counts (calls accepted per source and day)
   * to PostgreSQL, in seconds.
   */
  @IsInt()
  @Min(1)
  @Max(3_600)
  INGEST_USAGE_FLUSH_SECONDS: number = 10;

  /**
   * Partitions of `sluice.ingest.v1` (calls published to Kafka directly instead of over HTTP)
   * handled at once by one ingest process.
   */
  @IsInt()
  @Min(1)
  @Max(64)
  INGEST_KAFKA_PARTITIONS_CONCURRENTLY: number = 3;

  /** Records of one partition of `sluice.ingest.v1` in flight at once. */
  @IsInt()
  @Min(1)
  @Max(1_000)
  INGEST_KAFKA_MAX_IN_FLIGHT: number = 32;
}

/** The ingest app's typed, frozen configuration. */
export interface IngestConfig extends CommonConfig {
  readonly ingest: {
    readonly trustedProxies: readonly string[];
    /** INGEST_PUBLIC_URL; empty when each settings request's own address is used. */
    readonly publicUrl: string;
    readonly produceTimeoutMs: number;
    readonly produceLingerMs: number;
    readonly usageFlushIntervalMs: number;
    readonly ingressPartitionsConcurrently: number;
    readonly ingressMaxInFlight: number;
  };
}

/** Reads and validates the ingest app's configuration; the only reader of `process.env`. */
export function loadIngestConfig(env: NodeJS.ProcessEnv = process.env): IngestConfig {
  const vars = readEnv(IngestEnv, env);
  return deepFreeze({
    ...commonConfig('ingest', vars, vars.INGEST_PORT),
    ingest: {
      trustedProxies: vars.INGEST_TRUSTED_PROXIES.split(',').filter(Boolean),
      publicUrl: vars.INGEST_PUBLIC_URL,
      produceTimeoutMs: vars.INGEST_PRODUCE_TIMEOUT_MS,
      produceLingerMs: vars.INGEST_PRODUCE_LINGER_MS,
      usageFlushIntervalMs: vars.INGEST_USAGE_FLUSH_SECONDS * 1000,
      ingressPartitionsConcurrently: vars.INGEST_KAFKA_PARTITIONS_CONCURRENTLY,
      ingressMaxInFlight: vars.INGEST_KAFKA_MAX_IN_FLIGHT,
    },
  });
}
