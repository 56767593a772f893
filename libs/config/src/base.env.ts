import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';

/** Log levels, most verbose first. */
export const LOG_LEVELS = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * Variables every app reads. Property names are the variable names; initial values are
 * the defaults, and their type is the variable's type (a number variable needs a default).
 * Each app's `config.ts` extends this class with its own variables. The JSDoc of each
 * property is its user-facing description (`@example`: a value for `.env.example` where there
 * is no default): `npm run config:docs` writes `docs/configuration.md` and `.env.example`
 * from them.
 */
export class BaseEnv {
  /** Lowest level written to the JSON log. */
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'log';

  /**
   * Address the app's HTTP server (API, health and metrics) binds to: `0.0.0.0` listens on
   * every IPv4 interface, `127.0.0.1` on this machine only.
   */
  @IsString()
  HTTP_HOST: string = '0.0.0.0';

  /**
   * Longest wait at shutdown (SIGTERM) for in-flight requests and batches to finish and
   * commit, in milliseconds; the process then exits anyway.
   */
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS: number = 15_000;

  /**
   * Kafka bootstrap brokers, `host:port` separated by commas. When it is unset, `npm start`
   * and `npm test` start a local broker and use it.
   * @example 127.0.0.1:9092
   */
  @Matches(/^[^,\s]+:\d{1,5}(,[^,\s]+:\d{1,5})*$/, {
    message: 'KAFKA_BROKERS must be host:port[,host:port...]',
  })
  KAFKA_BROKERS!: string;

  /** Client id this app reports to Kafka (the app name is appended: `sluice-ingest`). */
  @Matches(/^[A-Za-z0-9._-]+$/)
  KAFKA_CLIENT_ID: string = 'sluice';

  /**
   * Prefix of every topic and consumer group name, for deployments sharing a cluster
   * (e.g. `staging.`).
   */
  @Matches(/^[A-Za-z0-9._-]*$/)
  KAFKA_TOPIC_PREFIX: string = '';

  /**
   * Partitions of each topic the apps create at start-up; existing topics keep theirs.
   * Partitions bound how many router and dispatcher replicas have work: choose this for the
   * most replicas you expect, before the first start.
   */
  @IsInt()
  @Min(1)
  @Max(10_000)
  KAFKA_TOPIC_PARTITIONS: number = 6;

  /** Replication factor of topics created at start-up; -1 uses the broker's default. */
  @IsInt()
  @Min(-1)
  @Max(32)
  KAFKA_REPLICATION_FACTOR: number = -1;

  /**
   * Retention of topics created at start-up, in hours. The retry tiers need well over the
   * retry window (`DISPATCHER_RETRY_WINDOW_SECONDS`) plus the longest dispatcher outage to
   * survive: a record deleted before it is due is a delivery lost.
   */
  @IsInt()
  @Min(1)
  KAFKA_RETENTION_HOURS: number = 168;

  /**
   * PostgreSQL connection URL of the settings database,
   * `postgres://user:password@host:port/database`. When it is unset, `npm start` and
   * `npm test` start a local PostgreSQL and use it.
   * @example postgres://sluice:sluice@127.0.0.1:5432/sluice
   */
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;

  /**
   * Most connections this app process opens to PostgreSQL, besides its one LISTEN
   * connection. Budget replicas × pool size over all four apps.
   */
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE: number = 5;

  /**
   * How often the app reloads its cache of settings (sources, destinations) in full, in
   * seconds, in case a change notification was missed; LISTEN/NOTIFY refreshes it at once.
   */
  @IsInt()
  @Min(1)
  @Max(86_400)
  SETTINGS_REFRESH_SECONDS: number = 60;
}

/** Variables of the apps that handle destinations' shared secrets: admin seals, dispatcher opens. */
export class SealedSecretsEnv extends BaseEnv {
  /**
   * Key that encrypts destinations' shared secrets at rest (admin) and opens them to sign
   * deliveries (dispatcher): 32 random bytes, base64 (`openssl rand -base64 32`). Both apps
   * need the same value; keep it across upgrades, or the stored secrets cannot be read.
   * `npm start` and `npm test` make one into `.local/` when it is unset.
   */
  @Matches(/^[A-Za-z0-9+/]{43}=$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be 32 bytes, base64 (openssl rand -base64 32)',
  })
  SECRETS_ENCRYPTION_KEY!: string;
}
