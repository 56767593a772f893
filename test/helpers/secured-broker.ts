import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { randomPorts } from './ports';
import { localBroker } from './spare-broker';

const run = promisify(execFile);

/** A user the broker knows, with a password made for this broker. */
export interface BrokerUser {
  readonly username: string;
  readonly password: string;
}

/**
 * A Kafka broker of a test's own with TLS and SASL, started by the project's local-services
 * script (its opt-in extra properties and SCRAM users). Certificates are made with openssl
 * into a temporary folder: a CA, a broker certificate naming 127.0.0.1 only, a client
 * certificate, and a second CA the broker's certificate does not chain to.
 *
 * Listeners, all on 127.0.0.1:
 * - `port`: SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's
 *   unsecured JWT validator: unsigned tokens with `sub` and `exp`);
 * - `mtlsPort`: SSL that requires a client certificate signed by the CA;
 * - `plainOnlyPort`: SASL_SSL with PLAIN alone (a mechanism the broker does not enable);
 * - `plaintextPort` (`port + 2`): plaintext, between the broker and itself (and tests that
 *   speak TLS to a plaintext listener).
 */
export class SecuredBroker {
  readonly dir = mkdtempSync(join(tmpdir(), 'sluice-secured-kafka-'));
  /** Its listeners' and controller's ports follow it (see the list above). */
  readonly port = randomPorts(5);
  readonly mtlsPort = this.port + 3;
  readonly plainOnlyPort = this.port + 4;
  readonly plaintextPort = this.port + 2;
  readonly plain: BrokerUser = { username: 'plain-app', password: secret() };
  readonly scram256: BrokerUser = { username: 'scram256-app', password: secret() };
  readonly scram512: BrokerUser = { username: 'scram512-app', password: secret() };
  /** PEM files. */
  readonly caFile = join(this.dir, 'ca.crt');
  readonly otherCaFile = join(this.dir, 'other-ca.crt');
  readonly clientCertFile = join(this.dir, 'client.crt');
  readonly clientKeyFile = join(this.dir, 'client.key');

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  get mtlsBrokers(): string {
    return `127.0.0.1:${this.mtlsPort}`;
  }

  async start(): Promise<void> {
    await this.makeCertificates();
    writeFileSync(join(this.dir, 'extra.properties'), this.serverProperties());
    writeFileSync(join(this.dir, 'client.properties'), this.readinessClientProperties());
    await this.services('up');
  }

  /** Stops the broker and removes its data and certificates. */
  async destroy(): Promise<void> {
    await this.services('down');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async makeCertificates(): Promise<void> {
    const dir = this.dir;
    const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    for (const ca of ['ca', 'other-ca']) {
      await openssl(
        'req',
        '-x509',
        ...ec,
        '-days',
        '2',
        '-subj',
        `/CN=sluice test ${ca}`,
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.crt`,
      );
    }
    // The broker's certificate names 127.0.0.1 only: reached as `localhost`, the name is wrong.
    writeFileSync(join(dir, 'broker.ext'), 'subjectAltName=IP:127.0.0.1\n');
    writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
    for (const [name, ext] of [
      ['broker', 'broker.ext'],
      ['client', 'client.ext'],
    ]) {
      await openssl(
        'req',
        ...ec,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${name}`,
      );
      await openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-out',
        `${name}.crt`,
        '-extfile',
        ext,
      );
    }
    // Kafka's PEM key store: an unencrypted PKCS#8 key followed by the certificate.
    await run(
      'bash',
      [
        '-c',
        'openssl pkcs8 -topk8 -nocrypt -in broker.key > broker.pem && cat broker.crt >> broker.pem',
      ],
      { cwd: dir },
    );
  }

  private serverProperties(): string {
    const { port, mtlsPort, plainOnlyPort } = this;
    const internal = this.plaintextPort;
    const login = (module: string, options = '') => `${module} required${options};`;
    const plainLogin = login(
      'org.apache.kafka.common.security.plain.PlainLoginModule',
      ` user_${this.plain.username}="${this.plain.password}"`,
    );
    return [
      `listeners=SASL_SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${port + 1},INTERNAL://127.0.0.1:${internal},SSL://127.0.0.1:${mtlsPort},PLAINONLY://127.0.0.1:${plainOnlyPort}`,
      `advertised.listeners=SASL_SSL://127.0.0.1:${port},INTERNAL://127.0.0.1:${internal},SSL://127.0.0.1:${mtlsPort},PLAINONLY://127.0.0.1:${plainOnlyPort}`,
      'inter.broker.listener.name=INTERNAL',
      'listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,SSL:SSL,PLAINONLY:SASL_SSL',
      'listener.name.plainonly.sasl.enabled.mechanisms=PLAIN',
      `listener.name.plainonly.plain.sasl.jaas.config=${plainLogin}`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${join(this.dir, 'broker.pem')}`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${this.caFile}`,
      'listener.name.ssl.ssl.client.auth=required',
      'listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER',
      `listener.name.sasl_ssl.plain.sasl.jaas.config=${plainLogin}`,
      `listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${login('org.apache.kafka.common.security.scram.ScramLoginModule')}`,
      `listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${login('org.apache.kafka.common.security.scram.ScramLoginModule')}`,
      `listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=${login(
        'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule',
        ' unsecuredLoginStringClaim_sub="broker"',
      )}`,
      '',
    ].join('\n');
  }

  /** How services.sh's readiness check reaches the SASL_SSL listener. */
  private readinessClientProperties(): string {
    return [
      'security.protocol=SASL_SSL',
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${this.plain.username}" password="${this.plain.password}";`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${this.caFile}`,
      '',
    ].join('\n');
  }

  private async services(command: 'up' | 'down'): Promise<void> {
    const scram = [
      `SCRAM-SHA-256=[name=${this.scram256.username},password=${this.scram256.password}]`,
      `SCRAM-SHA-512=[name=${this.scram512.username},password=${this.scram512.password}]`,
    ];
    await localBroker(command, this.dir, this.port, {
      SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES: join(this.dir, 'extra.properties'),
      SLUICE_LOCAL_KAFKA_CLIENT_PROPERTIES: join(this.dir, 'client.properties'),
      SLUICE_LOCAL_KAFKA_SCRAM: scram.join('\n'),
    });
  }
}

/** A password made for one broker, so a test can look for it in logs and errors. */
function secret(): string {
  return `pw-${randomBytes(12).toString('hex')}`;
}

/**
 * An unsigned JWT (`alg: none`), the kind Kafka's unsecured OAUTHBEARER validator accepts:
 * `sub` names the principal; `exp` in seconds since the epoch.
 */
export function unsecuredJwt(sub: string, expiresAtMs: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none' })}.${part({ sub, iat: now, exp: Math.floor(expiresAtMs / 1000) })}.`;
}
