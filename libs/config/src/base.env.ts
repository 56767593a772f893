import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';

/** Log levels, most verbose first. */
export const LOG_LEVELS = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * Variables every app reads. Property names are the variable names; initial values are
 * the defaults, and their type is the variable's type (a number variable needs a default). Each app's `config.ts` extends this class with its own variables.
 */
export class BaseEnv {
  /** Lowest level written to the JSON log. */
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'log';

  /** Address the HTTP server binds to. */
  @IsString()
  HTTP_HOST: string = '0.0.0.0';

  /** Longest wait for in-flight work at shutdown before the process exits anyway. */
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS: number = 15_000;

  /** Kafka bootstrap brokers, `host:port` separated by commas. */
  @Matches(/^[^,\s]+:\d{1,5}(,[^,\s]+:\d{1,5})*$/, {
    message: 'KAFKA_BROKERS must be host:port[,host:port...]',
  })
  KAFKA_BROKERS!: string;

  /** Client id this app reports to Kafka (the app name is appended). */
  @Matches(/^[A-Za-z0-9._-]+$/)
  KAFKA_CLIENT_ID: string = 'sluice';

  /** Prefix of every topic name, for deployments sharing a cluster (e.g. `staging.`). */
  @Matches(/^[A-Za-z0-9._-]*$/)
  KAFKA_TOPIC_PREFIX: string = '';

  /** Partitions of each topic created at start-up (existing topics are left as they are). */
  @IsInt()
  @Min(1)
  @Max(10_000)
  KAFKA_TOPIC_PARTITIONS: number = 6;

  /** Replication factor of topics created at start-up; -1 uses the broker's default. */
  @IsInt()
  @Min(-1)
  @Max(32)
  KAFKA_REPLICATION_FACTOR: number = -1;

  /** Retention of topics created at start-up, in hours (retry tiers need well over their delay). */
  @IsInt()
  @Min(1)
  KAFKA_RETENTION_HOURS: number = 168;

  /** PostgreSQL connection URL of the settings database. */
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;

  /** Most connections this app opens to PostgreSQL. */
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE: number = 5;

  /** Fallback refresh of the settings cache, in seconds (NOTIFY refreshes it at once). */
  @IsInt()
  @Min(1)
  @Max(86_400)
  SETTINGS_REFRESH_SECONDS: number = 60;
}
