import { ConnectionOptions } from 'node:tls';

import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';

import {
  explainKafkaError,
  KafkaSecurityError,
  kafkajsSecurity,
  oauthBearerAuthenticator,
  readSecurityFile,
  tokenFileProvider,
} from './kafka-security';

/** kafkajs declares no message parameter for this error; the real constructor takes one. */
const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;

/** A file system of named texts whose reads are counted; a missing name fails as ENOENT. */
function files(initial: Record<string, string>) {
  const contents = new Map(Object.entries(initial));
  const reads: string[] = [];
  const read = (path: string) => {
    reads.push(path);
    const text = contents.get(path);
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };
  return { read, reads, contents };
}

const PASSWORD = 'pa55-word-never-shown';

describe(kafkajsSecurity.name, () => {
  it('gives kafkajs nothing for plaintext without SASL', () => {
    expect(kafkajsSecurity({}, files({}).read)).toEqual({});
  });

  it('verifies the chain and reads the CA, certificate and key at each new connection', () => {
    const fs = files({ '/ca': 'CA-1', '/crt': 'CRT', '/key': 'KEY' });
    const { ssl } = kafkajsSecurity(
      { tls: { caFile: '/ca', certFile: '/crt', keyFile: '/key', checkHostname: true } },
      fs.read,
    );
    // kafkajs copies the settings into each socket's options like this.
    const first = Object.assign({ host: 'h' }, ssl) as ConnectionOptions;
    fs.contents.set('/ca', 'CA-2');
    const second = Object.assign({ host: 'h' }, ssl) as ConnectionOptions;
    expect(first).toMatchObject({ rejectUnauthorized: true, ca: 'CA-1', cert: 'CRT', key: 'KEY' });
    expect(second.ca).toBe('CA-2');
    expect(first.checkServerIdentity).toBeUndefined();
  });

  it('skips only the host name check when told to', () => {
    const { ssl } = kafkajsSecurity({ tls: { checkHostname: false } }, files({}).read);
    expect(ssl?.rejectUnauthorized).toBe(true);
    expect(ssl?.checkServerIdentity?.('other.example', {} as never)).toBeUndefined();
  });

  it('stops at once, naming the variable, when a file cannot be read', () => {
    const make = () =>
      kafkajsSecurity({ tls: { caFile: '/missing', checkHostname: true } }, files({}).read);
    expect(make).toThrow(KafkaSecurityError);
    expect(make).toThrow('cannot read KAFKA_SSL_CA_FILE (/missing: ENOENT)');
  });

  it('keeps a given password out of what the settings print', () => {
    const { sasl } = kafkajsSecurity(
      { sasl: { mechanism: 'scram-sha-512', username: 'app', password: PASSWORD } },
      files({}).read,
    );
    expect(sasl).toMatchObject({ mechanism: 'scram-sha-512', username: 'app' });
    expect((sasl as { password: string }).password).toBe(PASSWORD);
    expect(JSON.stringify(sasl)).not.toContain(PASSWORD);
  });

  it('reads a password file at each authentication, without its final newline', () => {
    const fs = files({ '/pw': `${PASSWORD}\n` });
    const { sasl } = kafkajsSecurity(
      { sasl: { mechanism: 'plain', username: 'app', passwordFile: '/pw' } },
      fs.read,
    );
    const password = () => (sasl as { password: string }).password;
    expect(password()).toBe(PASSWORD);
    fs.contents.set('/pw', 'rotated');
    expect(password()).toBe('rotated');
  });
});

describe(tokenFileProvider.name, () => {
  it('reads the token file at each call, so a rotated token is used', async () => {
    const fs = files({ '/token': 'token-1\n' });
    const provider = tokenFileProvider('/token', fs.read);
    await expect(provider()).resolves.toEqual({ value: 'token-1' });
    fs.contents.set('/token', 'token-2');
    await expect(provider()).resolves.toEqual({ value: 'token-2' });
    expect(fs.reads).toEqual(['/token', '/token']);
  });

  it('fails an authentication with an empty token file, naming the variable', async () => {
    const provider = tokenFileProvider('/token', files({ '/token': '  \n' }).read);
    await expect(provider()).rejects.toThrow(
      'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE (/token) is an empty file',
    );
  });
});

describe(oauthBearerAuthenticator.name, () => {
  /** Runs one authentication whose broker answers `answer`; returns the message sent. */
  async function authenticate(token: string, answer: Buffer | undefined) {
    let sent = '';
    const saslAuthenticate = async ({ request }: { request: { encode(): Promise<Buffer> } }) => {
      sent = (await request.encode()).toString('utf8');
      return answer;
    };
    const provider = oauthBearerAuthenticator(() => Promise.resolve({ value: token }));
    await provider({ saslAuthenticate } as never).authenticate();
    return sent;
  }

  it('sends the token as a bearer (RFC 7628) and accepts an empty answer', async () => {
    await expect(authenticate('tok', Buffer.alloc(0))).resolves.toContain(
      'auth=Bearer tok\x01\x01',
    );
  });

  it("takes the broker's error challenge for the refusal it is", async () => {
    const challenge = Buffer.from('\0\0\0\x1a{"status":"invalid_token"}');
    await expect(authenticate('tok', challenge)).rejects.toThrow(
      'SASL OAUTHBEARER authentication failed: invalid_token',
    );
  });

  it('reads the token file at each authentication through the security settings', async () => {
    const fs = files({ '/token': 'token-1' });
    const { sasl } = kafkajsSecurity(
      { sasl: { mechanism: 'oauthbearer', tokenFile: '/token' } },
      fs.read,
    );
    const provider = (
      sasl as { authenticationProvider: ReturnType<typeof oauthBearerAuthenticator> }
    ).authenticationProvider;
    const sent: string[] = [];
    const saslAuthenticate = async ({ request }: { request: { encode(): Promise<Buffer> } }) => {
      sent.push((await request.encode()).toString('utf8'));
      return undefined;
    };
    await provider({ saslAuthenticate } as never).authenticate();
    fs.contents.set('/token', 'token-2');
    await provider({ saslAuthenticate } as never).authenticate();
    expect(sent[0]).toContain('auth=Bearer token-1');
    expect(sent[1]).toContain('auth=Bearer token-2');
  });
});

describe(readSecurityFile.name, () => {
  it('never puts the content in its errors', () => {
    expect(() => readSecurityFile('/f', 'KAFKA_SASL_PASSWORD_FILE', () => '\n')).toThrow(
      'KAFKA_SASL_PASSWORD_FILE (/f) is an empty file',
    );
  });
});

describe(explainKafkaError.name, () => {
  const scram = {
    sasl: { mechanism: 'scram-sha-512', username: 'app', password: PASSWORD },
  } as const;
  const connectionError = (code: string, message = code) =>
    new KafkaJSConnectionError(`Connection error: ${message}`, { broker: 'b:1', code });
  // What kafkajs makes of a broker's handshake answer with Kafka's error code 33.
  const unsupportedMechanism = new KafkaJSProtocolError({
    type: 'UNSUPPORTED_SASL_MECHANISM',
    code: 33,
    retriable: false,
    message: 'The broker does not support the requested SASL mechanism',
  } as never);

  it.each([
    [
      'a refused password',
      new SaslError('SASL SCRAM SHA512 authentication failed: bad'),
      scram,
      'Kafka SASL authentication failed (KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD): the broker refused the SCRAM-SHA-512 credentials',
    ],
    [
      'a refused password file',
      new SaslError('SASL PLAIN authentication failed: bad'),
      { sasl: { mechanism: 'plain', username: 'app', passwordFile: '/pw' } } as const,
      'Kafka SASL authentication failed (KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD_FILE)',
    ],
    [
      'a refused token',
      new SaslError('SASL OAUTHBEARER authentication failed: bad'),
      { sasl: { mechanism: 'oauthbearer', tokenFile: '/t' } } as const,
      'Kafka SASL authentication failed (KAFKA_SASL_OAUTHBEARER_TOKEN_FILE)',
    ],
    [
      'a mechanism the broker lacks',
      new SaslError('SASL SCRAM-SHA-512 mechanism is not supported by the server'),
      scram,
      'Kafka SASL mechanism SCRAM-SHA-512 is not enabled on the broker (KAFKA_SASL_MECHANISM)',
    ],
    [
      "a mechanism the broker lacks, as the broker's handshake answer says it",
      Object.assign(new KafkaJSNonRetriableError(unsupportedMechanism), {
        cause: unsupportedMechanism,
      }),
      scram,
      'Kafka SASL mechanism SCRAM-SHA-512 is not enabled on the broker (KAFKA_SASL_MECHANISM)',
    ],
    [
      'an untrusted certificate, after retries',
      new KafkaJSNumberOfRetriesExceeded(connectionError('SELF_SIGNED_CERT_IN_CHAIN'), {
        retryCount: 5,
        retryTime: 100,
      }),
      { tls: { caFile: '/ca', checkHostname: true } },
      "Kafka TLS: the broker's certificate is not signed by the CA in KAFKA_SSL_CA_FILE (SELF_SIGNED_CERT_IN_CHAIN)",
    ],
    [
      'a certificate of another host',
      connectionError('ERR_TLS_CERT_ALTNAME_INVALID'),
      { tls: { checkHostname: true } },
      'does not name the host in KAFKA_BROKERS (KAFKA_SSL_CHECK_HOSTNAME)',
    ],
    [
      'TLS to a plaintext listener',
      connectionError('ERR_SSL_WRONG_VERSION_NUMBER'),
      { tls: { checkHostname: true } },
      'is it a plaintext listener? (KAFKA_SSL)',
    ],
    [
      'TLS to a plaintext listener that closes the connection',
      connectionError(
        'ECONNRESET',
        'Client network socket disconnected before secure TLS connection was established',
      ),
      { tls: { checkHostname: true } },
      'the broker did not answer in TLS: is it a plaintext listener? (KAFKA_SSL) (ECONNRESET)',
    ],
    [
      'a refused client certificate',
      connectionError('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'),
      { tls: { checkHostname: true } },
      'refused the client certificate (KAFKA_SSL_CERT_FILE/KAFKA_SSL_KEY_FILE)',
    ],
  ])('explains %s', (_, error, options, message) => {
    const explained = explainKafkaError(error, options);
    expect(explained).toBeInstanceOf(KafkaSecurityError);
    expect((explained as Error).message).toContain(message);
    expect((explained as Error).message).not.toContain(PASSWORD);
  });

  it('returns any other error as it is', () => {
    const error = connectionError('ECONNREFUSED');
    expect(explainKafkaError(error, scram)).toBe(error);
  });
});
