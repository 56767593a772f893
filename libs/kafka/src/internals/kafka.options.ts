/** How to reach the Kafka cluster. */
export interface KafkaConnectionOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /** Client id reported to the brokers. */
  readonly clientId: string;
  /** Deployment prefix of every topic name ('' for none). */
  readonly topicPrefix: string;
  /** TLS to the brokers; absent for plaintext. */
  readonly tls?: KafkaTlsOptions;
  /** SASL authentication; absent for none. */
  readonly sasl?: KafkaSaslOptions;
}

/**
 * TLS to the brokers. The broker's certificate chain is always verified; files are PEM and
 * read again at each new connection, so a renewed certificate takes effect without a restart.
 */
export interface KafkaTlsOptions {
  /** CA certificates the brokers' chains must end in; absent: Node's public CAs. */
  readonly caFile?: string;
  /** Client certificate (mutual TLS); given with `keyFile` or not at all. */
  readonly certFile?: string;
  /** Private key of `certFile`, unencrypted. */
  readonly keyFile?: string;
  /** Whether the certificate must name the host connected to (false only skips that check). */
  readonly checkHostname: boolean;
}

/** SASL mechanisms, as the apps' configuration spells them. */
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** SASL with a user name and a password (given, or read from a file at each authentication). */
export interface KafkaSaslPasswordOptions {
  readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly username: string;
  /** Exactly one of `password` and `passwordFile`. */
  readonly password?: string;
  readonly passwordFile?: string;
}

/** SASL OAUTHBEARER with a token read from a file at each authentication (workload identity). */
export interface KafkaSaslOAuthBearerOptions {
  readonly mechanism: 'oauthbearer';
  readonly tokenFile: string;
}

export type KafkaSaslOptions = KafkaSaslPasswordOptions | KafkaSaslOAuthBearerOptions;
