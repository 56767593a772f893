import {
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Matches,
  Max,
  Min,
  Validate,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';

import {
  KAFKA_SASL_MECHANISMS,
  KafkaSaslMechanismName,
  SetExactlyWhen,
  SetOnlyWhen,
  usesPassword,
} from './kafka-security';
import {
  OTLP_PROTOCOLS,
  OTLP_URL,
  OtlpProtocol,
  TRACES_EXPORTERS,
  TRACES_PROTOCOLS,
  TRACES_SAMPLERS,
  TracesExporterName,
  TracesSamplerName,
} from './tracing';

/** A consumer's heartbeat interval must leave room for a few heartbeats per session. */
@ValidatorConstraint({ name: 'heartbeatWithinSession' })
class HeartbeatWithinSession implements ValidatorConstraintInterface {
  validate(value: number, args: ValidationArguments): boolean {
    return value * 3 <= (args.object as BaseEnv).KAFKA_SESSION_TIMEOUT_MS;
  }

  defaultMessage(): string {
    return 'KAFKA_HEARTBEAT_INTERVAL_MS must be at most a third of KAFKA_SESSION_TIMEOUT_MS';
  }
}

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
   * How long a consumer group waits for a member that stopped heartbeating before it gives
   * the member's partitions to others, in milliseconds. It is what a killed (SIGKILL, OOM)
   * consumer costs: its partitions wait this long. A graceful stop leaves the group at once and
   * costs nothing. Shorter means a member stalled that long (CPU starved, paused) is dropped and
   * its work done twice; the broker accepts 6,000 to 1,800,000 by default.
   */
  @IsInt()
  @Min(1_000)
  @Max(1_800_000)
  KAFKA_SESSION_TIMEOUT_MS: number = 8_000;

  /**
   * How often a consumer heartbeats to its group, in milliseconds; at most a third of
   * `KAFKA_SESSION_TIMEOUT_MS`. Members learn of a rebalance at their next heartbeat.
   */
  @IsInt()
  @Min(100)
  @Validate(HeartbeatWithinSession)
  KAFKA_HEARTBEAT_INTERVAL_MS: number = 1_000;

  /**
   * Longest a rebalance waits for the group's live members to join again, in milliseconds; a
   * member that takes longer is dropped from the group.
   */
  @IsInt()
  @Min(1_000)
  @Max(1_800_000)
  KAFKA_REBALANCE_TIMEOUT_MS: number = 30_000;

  /**
   * Connect to the brokers over TLS. The brokers' certificate chain is always verified
   * (docs/kafka-security.md).
   */
  @IsBoolean({ message: 'KAFKA_SSL must be true or false' })
  KAFKA_SSL: boolean = false;

  /**
   * PEM file of the CA certificates the brokers' certificates must chain to. Empty: the
   * public CAs Node trusts. Read again at each new connection, so a renewed file is used.
   * @example /etc/sluice/kafka-tls/ca.crt
   */
  @SetOnlyWhen((env) => env.KAFKA_SSL, 'KAFKA_SSL_CA_FILE needs KAFKA_SSL=true')
  @IsString()
  KAFKA_SSL_CA_FILE: string = '';

  /**
   * PEM file of this app's client certificate, for brokers that authenticate clients by
   * certificate (mutual TLS); set together with `KAFKA_SSL_KEY_FILE`.
   */
  @SetOnlyWhen(
    (env) => env.KAFKA_SSL && env.KAFKA_SSL_KEY_FILE !== '',
    'KAFKA_SSL_CERT_FILE needs KAFKA_SSL=true and KAFKA_SSL_KEY_FILE',
  )
  @IsString()
  KAFKA_SSL_CERT_FILE: string = '';

  /** PEM file of the client certificate's private key (unencrypted); with `KAFKA_SSL_CERT_FILE`. */
  @SetOnlyWhen(
    (env) => env.KAFKA_SSL && env.KAFKA_SSL_CERT_FILE !== '',
    'KAFKA_SSL_KEY_FILE needs KAFKA_SSL=true and KAFKA_SSL_CERT_FILE',
  )
  @IsString()
  KAFKA_SSL_KEY_FILE: string = '';

  /**
   * Check that a broker's certificate names the host in `KAFKA_BROKERS`. `false` skips only
   * that check (the chain is still verified against the CA): for brokers reached by an address
   * their certificates do not name, such as a port-forward.
   */
  @IsBoolean({ message: 'KAFKA_SSL_CHECK_HOSTNAME must be true or false' })
  KAFKA_SSL_CHECK_HOSTNAME: boolean = true;

  /**
   * SASL mechanism: `plain`, `scram-sha-256`, `scram-sha-512` or `oauthbearer`; empty for no
   * SASL. Use it with `KAFKA_SSL=true`: PLAIN sends the password as it is.
   */
  @IsIn(KAFKA_SASL_MECHANISMS)
  KAFKA_SASL_MECHANISM: KafkaSaslMechanismName = '';

  /** SASL user name (PLAIN and SCRAM); for Confluent Cloud, the API key. */
  @SetExactlyWhen(
    usesPassword,
    'KAFKA_SASL_USERNAME is needed with KAFKA_SASL_MECHANISM plain or scram-*, and only then',
  )
  @IsString()
  KAFKA_SASL_USERNAME: string = '';

  /**
   * SASL password (PLAIN and SCRAM); or give `KAFKA_SASL_PASSWORD_FILE` instead. Never logged.
   */
  @SetExactlyWhen(
    (env) => usesPassword(env) && env.KAFKA_SASL_PASSWORD_FILE === '',
    'KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE (one of them) is needed with KAFKA_SASL_MECHANISM plain or scram-*, and only then',
  )
  @IsString()
  KAFKA_SASL_PASSWORD: string = '';

  /**
   * File holding the SASL password (a final newline is ignored), instead of
   * `KAFKA_SASL_PASSWORD`; read again at each authentication, so a rotated password is used by
   * the next connection.
   */
  @SetOnlyWhen(
    (env) => usesPassword(env) && env.KAFKA_SASL_PASSWORD === '',
    'KAFKA_SASL_PASSWORD_FILE needs KAFKA_SASL_MECHANISM plain or scram-*, and no KAFKA_SASL_PASSWORD',
  )
  @IsString()
  KAFKA_SASL_PASSWORD_FILE: string = '';

  /**
   * File holding the OAUTHBEARER token (`KAFKA_SASL_MECHANISM=oauthbearer`), read at each
   * authentication, so a token the platform rotates in place (a projected service-account
   * token) is always the current one.
   * @example /var/run/secrets/kafka/token
   */
  @SetExactlyWhen(
    (env) => env.KAFKA_SASL_MECHANISM === 'oauthbearer',
    'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE is needed with KAFKA_SASL_MECHANISM=oauthbearer, and only then',
  )
  @IsString()
  KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: string = '';

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

  /**
   * OpenTelemetry traces (ingest, router, dispatcher): `otlp` exports them, `none` turns them
   * off. Empty (the default): on when `OTEL_EXPORTER_OTLP_ENDPOINT` or
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, off otherwise. Off, no SDK is loaded.
   */
  @IsIn(TRACES_EXPORTERS, { message: 'OTEL_TRACES_EXPORTER must be otlp or none' })
  OTEL_TRACES_EXPORTER: TracesExporterName = '';

  /** `true` turns traces off whatever the other `OTEL_*` variables say. */
  @IsBoolean({ message: 'OTEL_SDK_DISABLED must be true or false' })
  OTEL_SDK_DISABLED: boolean = false;

  /**
   * Base URL of the OTLP/HTTP receiver (a Collector, Jaeger, Tempo); traces go to its
   * `/v1/traces`. Empty: `http://localhost:4318` when traces are on.
   * @example http://otel-collector:4318
   */
  @Matches(OTLP_URL, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT: string = '';

  /** Full URL traces are posted to, over `OTEL_EXPORTER_OTLP_ENDPOINT` (no path added). */
  @Matches(OTLP_URL, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http or https URL',
  })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string = '';

  /**
   * OTLP over HTTP: `http/protobuf` or `http/json` (gRPC is not supported; every receiver
   * that takes OTLP takes it over HTTP too, on port 4318).
   */
  @IsIn(OTLP_PROTOCOLS, {
    message: 'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json',
  })
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

  /** Overrides `OTEL_EXPORTER_OTLP_PROTOCOL` for traces. */
  @IsIn(TRACES_PROTOCOLS, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http/protobuf or http/json',
  })
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: OtlpProtocol | '' = '';

  /** The `service.name` of the spans. Empty: `sluice-<app>` (`sluice-ingest`, ...). */
  @Matches(/^[^\s,=]*$/, { message: 'OTEL_SERVICE_NAME must not contain spaces, commas or =' })
  OTEL_SERVICE_NAME: string = '';

  /**
   * More resource attributes of the spans, `key=value` pairs separated by commas (values
   * percent-encoded), such as `deployment.environment.name=production`.
   */
  @IsString()
  OTEL_RESOURCE_ATTRIBUTES: string = '';

  /**
   * Which traces are kept: `parentbased_traceidratio` keeps the share in
   * `OTEL_TRACES_SAMPLER_ARG` of new traces and follows the producer's decision for a call
   * that came with a `traceparent`; also `always_on`, `always_off`, `traceidratio`,
   * `parentbased_always_on`, `parentbased_always_off`.
   */
  @IsIn(TRACES_SAMPLERS)
  OTEL_TRACES_SAMPLER: TracesSamplerName = 'parentbased_always_on';

  /** Share of traces the ratio samplers keep, 0 to 1. Empty: 1. */
  @Matches(/^(0(\.\d+)?|1(\.0+)?|\.\d+)?$/, {
    message: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
  })
  OTEL_TRACES_SAMPLER_ARG: string = '';

  /** Longest a finished span waits before it is exported with others, in milliseconds. */
  @IsInt()
  @Min(1)
  @Max(600_000)
  OTEL_BSP_SCHEDULE_DELAY: number = 5_000;

  /** Finished spans held for export at most; past that new ones are dropped (and counted). */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  OTEL_BSP_MAX_QUEUE_SIZE: number = 2_048;
}

/** Variables of the apps that handle destinations' shared secrets: admin seals, dispatcher opens. */
export class SealedSecretsEnv extends BaseEnv {
  /**
   * Key that encrypts destinations' shared secrets and webhooks' static header values at rest
   * (admin, and the migration command when it encrypts values stored before) and opens them to
   * sign and send deliveries (dispatcher): 32 random bytes, base64 (`openssl rand -base64 32`).
   * Both apps need the same value; keep it across upgrades, or the stored secrets cannot be read.
   * `npm start` and `npm test` make one into `.local/` when it is unset.
   */
  @Matches(/^[A-Za-z0-9+/]{43}=$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be 32 bytes, base64 (openssl rand -base64 32)',
  })
  SECRETS_ENCRYPTION_KEY!: string;
}
