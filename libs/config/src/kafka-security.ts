import { ValidateBy, ValidationArguments } from 'class-validator';

/** SASL mechanisms Kafka's clients here speak ('' for no SASL). */
export const KAFKA_SASL_MECHANISMS = [
  '',
  'plain',
  'scram-sha-256',
  'scram-sha-512',
  'oauthbearer',
] as const;
export type KafkaSaslMechanismName = (typeof KAFKA_SASL_MECHANISMS)[number];

/** The variables the rules below read; BaseEnv declares them. */
export interface KafkaSecurityVariables {
  KAFKA_SSL: boolean;
  KAFKA_SSL_CA_FILE: string;
  KAFKA_SSL_CERT_FILE: string;
  KAFKA_SSL_KEY_FILE: string;
  KAFKA_SSL_CHECK_HOSTNAME: boolean;
  KAFKA_SASL_MECHANISM: KafkaSaslMechanismName;
  KAFKA_SASL_USERNAME: string;
  KAFKA_SASL_PASSWORD: string;
  KAFKA_SASL_PASSWORD_FILE: string;
  KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: string;
}

/** TLS settings, typed (libs/kafka's KafkaTlsOptions has the same shape). */
export interface KafkaTlsConfig {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly checkHostname: boolean;
}

/** SASL settings, typed (libs/kafka's KafkaSaslOptions has the same shape). */
export type KafkaSaslConfig =
  | {
      readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
      readonly username: string;
      readonly password?: string;
      readonly passwordFile?: string;
    }
  | { readonly mechanism: 'oauthbearer'; readonly tokenFile: string };

/** Whether the mechanism takes a user name and a password. */
export function usesPassword(env: KafkaSecurityVariables): boolean {
  return ['plain', 'scram-sha-256', 'scram-sha-512'].includes(env.KAFKA_SASL_MECHANISM);
}

/**
 * The variable must be set exactly when `needed` holds for the other variables (an empty
 * variable counts as unset). The message names the variables, never a value.
 */
export function SetExactlyWhen(
  needed: (env: KafkaSecurityVariables) => boolean,
  message: string,
): PropertyDecorator {
  return ValidateBy({
    name: 'setExactlyWhen',
    validator: {
      validate: (value: unknown, args: ValidationArguments) =>
        (value !== '') === needed(args.object as KafkaSecurityVariables),
      defaultMessage: () => message,
    },
  });
}

/** The variable may be set only when `allowed` holds for the other variables. */
export function SetOnlyWhen(
  allowed: (env: KafkaSecurityVariables) => boolean,
  message: string,
): PropertyDecorator {
  return ValidateBy({
    name: 'setOnlyWhen',
    validator: {
      validate: (value: unknown, args: ValidationArguments) =>
        value === '' || allowed(args.object as KafkaSecurityVariables),
      defaultMessage: () => message,
    },
  });
}

/** The TLS and SASL settings of validated variables (undefined: plaintext, no SASL). */
export function kafkaSecurityConfig(env: KafkaSecurityVariables): {
  tls?: KafkaTlsConfig;
  sasl?: KafkaSaslConfig;
} {
  const file = (value: string) => (value === '' ? undefined : value);
  const tls = env.KAFKA_SSL
    ? {
        caFile: file(env.KAFKA_SSL_CA_FILE),
        certFile: file(env.KAFKA_SSL_CERT_FILE),
        keyFile: file(env.KAFKA_SSL_KEY_FILE),
        checkHostname: env.KAFKA_SSL_CHECK_HOSTNAME,
      }
    : undefined;
  const mechanism = env.KAFKA_SASL_MECHANISM;
  let sasl: KafkaSaslConfig | undefined;
  if (mechanism === 'oauthbearer') {
    sasl = { mechanism, tokenFile: env.KAFKA_SASL_OAUTHBEARER_TOKEN_FILE };
  } else if (mechanism !== '') {
    sasl = {
      mechanism,
      username: env.KAFKA_SASL_USERNAME,
      password: file(env.KAFKA_SASL_PASSWORD),
      passwordFile: file(env.KAFKA_SASL_PASSWORD_FILE),
    };
  }
  return { tls, sasl };
}
