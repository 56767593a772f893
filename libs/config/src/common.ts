import { BaseEnv, LogLevelName } from './base.env';
import { KafkaSaslConfig, kafkaSecurityConfig, KafkaTlsConfig } from './kafka-security';
import { TracingConfig, tracingConfig } from './tracing';

/** Kafka settings shared by every app, typed. */
export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly topicPrefix: string;
  readonly topicPartitions: number;
  readonly replicationFactor: number;
  readonly retentionMs: number;
  /** TLS to the brokers; undefined for plaintext. */
  readonly tls?: KafkaTlsConfig;
  /** SASL authentication; undefined for none. Holds the password: never log it. */
  readonly sasl?: KafkaSaslConfig;
  /** Group membership of the app's consumers. */
  readonly consumer: {
    readonly sessionTimeoutMs: number;
    readonly heartbeatIntervalMs: number;
    readonly rebalanceTimeoutMs: number;
  };
}

/** PostgreSQL settings shared by every app, typed. */
export interface DatabaseConfig {
  readonly url: string;
  readonly poolSize: number;
  readonly refreshIntervalMs: number;
}

/** What every app's typed configuration has. */
export interface CommonConfig {
  readonly app: string;
  readonly logLevel: LogLevelName;
  readonly http: { readonly host: string; readonly port: number };
  readonly shutdownTimeoutMs: number;
  readonly kafka: KafkaConfig;
  readonly database: DatabaseConfig;
  /** OpenTelemetry traces; undefined when they are off (the default). */
  readonly tracing?: TracingConfig;
}

/** Maps the validated shared variables to the typed, frozen shape apps use. */
export function commonConfig(app: string, env: BaseEnv, port: number): CommonConfig {
  return deepFreeze({
    app,
    logLevel: env.LOG_LEVEL,
    http: { host: env.HTTP_HOST, port },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    kafka: {
      brokers: env.KAFKA_BROKERS.split(','),
      clientId: `${env.KAFKA_CLIENT_ID}-${app}`,
      topicPrefix: env.KAFKA_TOPIC_PREFIX,
      topicPartitions: env.KAFKA_TOPIC_PARTITIONS,
      replicationFactor: env.KAFKA_REPLICATION_FACTOR,
      retentionMs: env.KAFKA_RETENTION_HOURS * 3_600_000,
      consumer: {
        sessionTimeoutMs: env.KAFKA_SESSION_TIMEOUT_MS,
        heartbeatIntervalMs: env.KAFKA_HEARTBEAT_INTERVAL_MS,
        rebalanceTimeoutMs: env.KAFKA_REBALANCE_TIMEOUT_MS,
      },
      ...kafkaSecurityConfig(env),
    },
    database: {
      url: env.DATABASE_URL,
      poolSize: env.DATABASE_POOL_SIZE,
      refreshIntervalMs: env.SETTINGS_REFRESH_SECONDS * 1000,
    },
    tracing: tracingConfig(env, app),
  });
}

/** Freezes an object and everything reachable from it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
