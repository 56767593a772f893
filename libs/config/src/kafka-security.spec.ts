import { BaseEnv } from './base.env';
import { commonConfig } from './common';
import { ConfigError, readEnv } from './env';

const REQUIRED = {
  KAFKA_BROKERS: '127.0.0.1:9093',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};
const SECRET = 'sasl-password-hunter2';

function kafka(vars: Record<string, string>) {
  return commonConfig('router', readEnv(BaseEnv, { ...REQUIRED, ...vars }), 8082).kafka;
}

/** The message of the ConfigError that reading `vars` throws. */
function problems(vars: Record<string, string>): string {
  try {
    readEnv(BaseEnv, { ...REQUIRED, ...vars });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('no ConfigError');
}

describe('Kafka security variables', () => {
  it('default to plaintext without SASL', () => {
    const config = kafka({});
    expect(config.tls).toBeUndefined();
    expect(config.sasl).toBeUndefined();
  });

  it('map TLS with a CA and a client certificate, the host name check on by default', () => {
    expect(
      kafka({
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: '/ca.crt',
        KAFKA_SSL_CERT_FILE: '/tls.crt',
        KAFKA_SSL_KEY_FILE: '/tls.key',
      }).tls,
    ).toEqual({
      caFile: '/ca.crt',
      certFile: '/tls.crt',
      keyFile: '/tls.key',
      checkHostname: true,
    });
    expect(kafka({ KAFKA_SSL: 'true', KAFKA_SSL_CHECK_HOSTNAME: 'false' }).tls).toEqual({
      caFile: undefined,
      certFile: undefined,
      keyFile: undefined,
      checkHostname: false,
    });
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'])('map %s with a password', (mechanism) => {
    expect(
      kafka({
        KAFKA_SASL_MECHANISM: mechanism,
        KAFKA_SASL_USERNAME: 'app',
        KAFKA_SASL_PASSWORD: SECRET,
      }).sasl,
    ).toEqual({ mechanism, username: 'app', password: SECRET, passwordFile: undefined });
  });

  it('map a password file and a token file', () => {
    expect(
      kafka({
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'app',
        KAFKA_SASL_PASSWORD_FILE: '/pw',
      }).sasl,
    ).toMatchObject({ passwordFile: '/pw', password: undefined });
    expect(
      kafka({ KAFKA_SASL_MECHANISM: 'oauthbearer', KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: '/token' })
        .sasl,
    ).toEqual({ mechanism: 'oauthbearer', tokenFile: '/token' });
  });

  it.each([
    [{ KAFKA_SSL: 'yes' }, 'KAFKA_SSL must be true or false'],
    [{ KAFKA_SSL_CA_FILE: '/ca' }, 'KAFKA_SSL_CA_FILE needs KAFKA_SSL=true'],
    [{ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/c' }, 'KAFKA_SSL_CERT_FILE needs'],
    [{ KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: '/k' }, 'KAFKA_SSL_KEY_FILE needs'],
    [{ KAFKA_SASL_MECHANISM: 'gssapi' }, 'KAFKA_SASL_MECHANISM (isIn)'],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_PASSWORD: SECRET },
      'KAFKA_SASL_USERNAME is needed',
    ],
    [{ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'a' }, 'KAFKA_SASL_PASSWORD or'],
    [
      {
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'a',
        KAFKA_SASL_PASSWORD: SECRET,
        KAFKA_SASL_PASSWORD_FILE: '/pw',
      },
      'KAFKA_SASL_PASSWORD_FILE needs',
    ],
    [{ KAFKA_SASL_USERNAME: 'a', KAFKA_SASL_PASSWORD: SECRET }, 'KAFKA_SASL_USERNAME is needed'],
    [{ KAFKA_SASL_MECHANISM: 'oauthbearer' }, 'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE is needed'],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: '/t' },
      'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE is needed with KAFKA_SASL_MECHANISM=oauthbearer, and only then',
    ],
  ])('refuse %j, naming the variable and not the value', (vars, message) => {
    const text = problems(vars);
    expect(text).toContain(message);
    expect(text).not.toContain(SECRET);
  });
});
