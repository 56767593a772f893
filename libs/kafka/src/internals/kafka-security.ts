import { readFileSync } from 'node:fs';
import { ConnectionOptions } from 'node:tls';

import {
  AuthenticationProviderArgs,
  KafkaJSSASLAuthenticationError,
  Mechanism,
  SASLOptions,
} from 'kafkajs';

import { KafkaConnectionOptions, KafkaSaslOptions, KafkaTlsOptions } from './kafka.options';
import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/**
 * The variables the apps set these options with (libs/config's BaseEnv): errors name them, so
 * an operator knows what to fix. Never a value: the errors can reach logs.
 */
export const KAFKA_SECURITY_VARIABLES = {
  ssl: 'KAFKA_SSL',
  caFile: 'KAFKA_SSL_CA_FILE',
  certFile: 'KAFKA_SSL_CERT_FILE',
  keyFile: 'KAFKA_SSL_KEY_FILE',
  checkHostname: 'KAFKA_SSL_CHECK_HOSTNAME',
  mechanism: 'KAFKA_SASL_MECHANISM',
  username: 'KAFKA_SASL_USERNAME',
  password: 'KAFKA_SASL_PASSWORD',
  passwordFile: 'KAFKA_SASL_PASSWORD_FILE',
  tokenFile: 'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE',
} as const;
const VARS = KAFKA_SECURITY_VARIABLES;

/** Why a secured connection could not be made. */
export type KafkaSecurityErrorCode =
  | 'KAFKA_SECURITY_FILE' // a CA, certificate, key, password or token file cannot be read
  | 'KAFKA_SASL_FAILED' // the broker refused the credentials or the mechanism
  | 'KAFKA_TLS_FAILED'; // the TLS handshake failed (untrusted certificate, wrong name, ...)

/** A failure of Kafka's TLS or SASL, naming the variables to look at and no secret. */
export class KafkaSecurityError extends Error {
  constructor(
    readonly code: KafkaSecurityErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KafkaSecurityError';
  }
}

/** Reads a file as text (injected in tests). */
export type ReadTextFile = (path: string) => string;

const readText: ReadTextFile = (path) => readFileSync(path, 'utf8');

/**
 * Reads a file the security options name. A failure names the variable, the path and Node's
 * error code, never the content.
 * @throws {KafkaSecurityError} when the file cannot be read or is empty
 */
export function readSecurityFile(path: string, variable: string, read = readText): string {
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new KafkaSecurityError(
      'KAFKA_SECURITY_FILE',
      `cannot read ${variable} (${path}: ${code})`,
    );
  }
  if (text.trim() === '') {
    throw new KafkaSecurityError('KAFKA_SECURITY_FILE', `${variable} (${path}) is an empty file`);
  }
  return text;
}

/** What kafkajs takes for TLS and SASL. */
export interface KafkajsSecurity {
  readonly ssl?: ConnectionOptions;
  readonly sasl?: SASLOptions | Mechanism;
}

/**
 * kafkajs's `ssl` and `sasl` settings for the options. Each file is read once here, so a
 * missing one stops start-up, and then again whenever kafkajs uses it: kafkajs copies `ssl`
 * into each new socket's options and reads `sasl.password` and the token at each
 * authentication, so a rotated certificate, password or workload-identity token is picked up
 * by the next connection without a restart.
 * @throws {KafkaSecurityError} when a file cannot be read
 */
export function kafkajsSecurity(
  options: Pick<KafkaConnectionOptions, 'tls' | 'sasl'>,
  read = readText,
): KafkajsSecurity {
  return {
    ...(options.tls && { ssl: tlsSettings(options.tls, read) }),
    ...(options.sasl && { sasl: saslSettings(options.sasl, read) }),
  };
}

function tlsSettings(tls: KafkaTlsOptions, read: ReadTextFile): ConnectionOptions {
  // Chain verification stays on whatever the options say; only the name check can be skipped.
  const settings: ConnectionOptions = { rejectUnauthorized: true };
  if (!tls.checkHostname) settings.checkServerIdentity = () => undefined;
  fileProperty(settings, 'ca', tls.caFile, VARS.caFile, read);
  fileProperty(settings, 'cert', tls.certFile, VARS.certFile, read);
  fileProperty(settings, 'key', tls.keyFile, VARS.keyFile, read);
  return settings;
}

function saslSettings(sasl: KafkaSaslOptions, read: ReadTextFile): SASLOptions | Mechanism {
  if (sasl.mechanism === 'oauthbearer') {
    readSecurityFile(sasl.tokenFile, VARS.tokenFile, read);
    return {
      mechanism: 'oauthbearer',
      authenticationProvider: oauthBearerAuthenticator(tokenFileProvider(sasl.tokenFile, read)),
    };
  }
  const settings = { mechanism: sasl.mechanism, username: sasl.username } as SASLOptions;
  const passwordFile = sasl.passwordFile;
  if (passwordFile === undefined) {
    // Not enumerable: a settings object printed by mistake does not show it.
    Object.defineProperty(settings, 'password', { value: sasl.password ?? '' });
  } else {
    readSecurityFile(passwordFile, VARS.passwordFile, read);
    Object.defineProperty(settings, 'password', {
      get: () => withoutFinalNewline(readSecurityFile(passwordFile, VARS.passwordFile, read)),
    });
  }
  return settings;
}

/**
 * kafkajs's OAUTHBEARER token provider: reads the token file at each authentication (kafkajs
 * authenticates every new connection, and again before the broker's session expires), so a
 * token the platform rotates in place (a projected service-account token) is always current.
 */
export function tokenFileProvider(path: string, read = readText): () => Promise<{ value: string }> {
  // eslint-disable-next-line @typescript-eslint/require-await -- a rejection, not a throw
  return async () => ({ value: readSecurityFile(path, VARS.tokenFile, read).trim() });
}

/** kafkajs's encoding of the OAUTHBEARER client message (RFC 7628). */
type OauthBearerMessage = (
  sasl: object,
  token: { value: string },
) => Promise<{ encode(): Promise<Buffer> }>;

/**
 * kafkajs's own encoding of the OAUTHBEARER message, reused as it is: an internal module, so
 * it is loaded only when OAUTHBEARER is configured, and only from the pinned kafkajs.
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one
 */
function oauthBearerMessage(found = installedKafkajsVersion()): OauthBearerMessage {
  assertPinnedKafkajs('OAUTHBEARER authenticator', found);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('kafkajs/src/protocol/sasl/oauthBearer/request') as OauthBearerMessage;
}

/** kafkajs's SASL error, whose declared constructor takes no message (the real one does). */
const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;

/**
 * OAUTHBEARER as kafkajs does it, except that the broker's answer is read: a broker refusing
 * a token answers with an error challenge (`{"status":"invalid_token"}`) rather than an error
 * code, which kafkajs 2.2.4 takes for success (its next request then fails on a closed
 * connection, and no error says why).
 */
export function oauthBearerAuthenticator(token: () => Promise<{ value: string }>) {
  const message = oauthBearerMessage();
  return ({ saslAuthenticate }: AuthenticationProviderArgs) => ({
    authenticate: async (): Promise<void> => {
      const request = await message({}, await token());
      const answer = await saslAuthenticate<Buffer>({
        request,
        response: { decode: (bytes: Buffer) => bytes, parse: (bytes: Buffer) => bytes },
      });
      const challenge = answer ? answer.toString('utf8') : '';
      const json = challenge.indexOf('{');
      if (json >= 0) {
        const status = /"status"\s*:\s*"([\w-]+)"/.exec(challenge.slice(json))?.[1] ?? 'refused';
        throw new SaslError(`SASL OAUTHBEARER authentication failed: ${status}`);
      }
    },
  });
}

/** Defines `key` as a getter reading the file at `path`, after reading it once now. */
function fileProperty(
  target: object,
  key: 'ca' | 'cert' | 'key',
  path: string | undefined,
  variable: string,
  read: ReadTextFile,
): void {
  if (path === undefined) return;
  readSecurityFile(path, variable, read);
  // Enumerable, so kafkajs's Object.assign into the socket options calls it.
  Object.defineProperty(target, key, {
    enumerable: true,
    get: () => readSecurityFile(path, variable, read),
  });
}

/** A file written with `echo` ends in a newline that is not part of the password. */
function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** Node's codes for a broker certificate that does not chain to a trusted CA. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/**
 * A clear error for a Kafka failure caused by TLS or SASL, naming the variables to check;
 * any other error is returned as it is. kafkajs wraps the cause (retries exceeded), so the
 * whole `cause` chain is searched.
 */
export function explainKafkaError(
  error: unknown,
  options: Pick<KafkaConnectionOptions, 'tls' | 'sasl'>,
): unknown {
  for (let e = error; e instanceof Error; e = e.cause) {
    const explained = explainOne(e, options);
    if (explained) return explained;
  }
  return error;
}

function explainOne(
  error: Error & { code?: unknown },
  options: Pick<KafkaConnectionOptions, 'tls' | 'sasl'>,
): KafkaSecurityError | undefined {
  if (error instanceof KafkaSecurityError) return error;
  if (error.name === 'KafkaJSSASLAuthenticationError') return saslError(error, options.sasl);
  // A broker that does not enable the mechanism answers the handshake with this error code.
  if ((error as { type?: unknown }).type === UNSUPPORTED_SASL_MECHANISM) {
    return mechanismError(options.sasl);
  }
  const code = typeof error.code === 'string' ? error.code : '';
  if (error.name !== 'KafkaJSConnectionError' || code === '') return undefined;
  return tlsError(code, error.message, options.tls);
}

/** kafkajs's name for Kafka's error code 33, the broker's answer to an unknown mechanism. */
const UNSUPPORTED_SASL_MECHANISM = 'UNSUPPORTED_SASL_MECHANISM';

function mechanismError(sasl: KafkaSaslOptions | undefined): KafkaSecurityError {
  const mechanism = (sasl?.mechanism ?? 'none').toUpperCase();
  return new KafkaSecurityError(
    'KAFKA_SASL_FAILED',
    `Kafka SASL mechanism ${mechanism} is not enabled on the broker (${VARS.mechanism})`,
  );
}

function saslError(error: Error, sasl: KafkaSaslOptions | undefined): KafkaSecurityError {
  if (/mechanism is not supported by the server/.test(error.message)) return mechanismError(sasl);
  const mechanism = (sasl?.mechanism ?? 'none').toUpperCase();
  return new KafkaSecurityError(
    'KAFKA_SASL_FAILED',
    `Kafka SASL authentication failed (${credentialVariables(sasl)}): the broker refused the ` +
      `${mechanism} credentials`,
  );
}

function credentialVariables(sasl: KafkaSaslOptions | undefined): string {
  if (sasl?.mechanism === 'oauthbearer') return VARS.tokenFile;
  const password = sasl?.passwordFile === undefined ? VARS.password : VARS.passwordFile;
  return `${VARS.username}/${password}`;
}

/**
 * Node's message when a TLS handshake's connection is closed before the broker answered: a
 * plaintext listener reads the TLS greeting as an oversized request and closes the connection.
 */
const CLOSED_BEFORE_TLS = 'before secure TLS connection was established';

function tlsError(
  code: string,
  message: string,
  tls: KafkaTlsOptions | undefined,
): KafkaSecurityError | undefined {
  const failed = (message: string) =>
    new KafkaSecurityError('KAFKA_TLS_FAILED', `Kafka TLS: ${message} (${code})`);
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    const where = tls?.caFile === undefined ? 'the public CAs' : `the CA in ${VARS.caFile}`;
    return failed(`the broker's certificate is not signed by ${where}`);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return failed(
      `the broker's certificate does not name the host in KAFKA_BROKERS (${VARS.checkHostname})`,
    );
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return failed(`the broker's certificate is expired or not yet valid`);
  }
  const closedBeforeTls = tls !== undefined && message.includes(CLOSED_BEFORE_TLS);
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    closedBeforeTls
  ) {
    return failed(`the broker did not answer in TLS: is it a plaintext listener? (${VARS.ssl})`);
  }
  if (/ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN)/.test(code)) {
    return failed(`the broker refused the client certificate (${VARS.certFile}/${VARS.keyFile})`);
  }
  return undefined;
}
