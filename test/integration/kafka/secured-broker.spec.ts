import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { INestApplication, INestMicroservice, LoggerService } from '@nestjs/common';

import { loadIngestConfig } from '../../../apps/ingest/src/config';
import { startIngest } from '../../../apps/ingest/src/main';
import { loadRouterConfig } from '../../../apps/router/src/config';
import { routerKafka } from '../../../apps/router/src/kafka-topology';
import { startRouter } from '../../../apps/router/src/main';
import { BaseEnv, commonConfig, readEnv } from '@app/config';
import { TOPIC } from '@app/contracts';
import {
  BatchProducer,
  ConsumerLagReader,
  IncomingRecord,
  KafkaConnection,
  KafkaSecurityError,
  lagGroups,
  RecordReader,
  TopicAdmin,
} from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { BrokerUser, SecuredBroker, unsecuredJwt } from '../../helpers/secured-broker';
import { eventually, uniquePrefix } from '../../helpers/services';
import { createMigratedTestDatabase, newWriteKey, TestDatabase } from '../../helpers/test-database';
import { startConsumerApp, TEST_TOPIC } from './consumer-app';

const broker = new SecuredBroker();
let db: TestDatabase;

beforeAll(async () => {
  [db] = await Promise.all([createMigratedTestDatabase(), broker.start()]);
}, 180_000);

afterAll(async () => {
  await db?.drop();
  await broker.destroy();
}, 120_000);

/** The variables an app gets for TLS with the test CA and SASL as `user`. */
function securedEnv(
  mechanism: string,
  user: BrokerUser,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    KAFKA_BROKERS: broker.brokers,
    DATABASE_URL: db.url,
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: broker.caFile,
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: user.username,
    KAFKA_SASL_PASSWORD: user.password,
    ...extra,
  };
}

/** A connection made the way the apps make theirs: variables, validated, to the typed config. */
function connectionFrom(
  env: Record<string, string>,
  label: string,
  prefix = uniquePrefix(label),
): KafkaConnection {
  const { kafka } = commonConfig('it', readEnv(BaseEnv, env), 0);
  return new KafkaConnection({ ...kafka, topicPrefix: prefix });
}

/** Whether connecting a TopicAdmin (every app's first contact with Kafka) works. */
async function connectAdmin(connection: KafkaConnection): Promise<TopicAdmin> {
  const admin = new TopicAdmin(connection);
  await admin.connect();
  return admin;
}

/** The error connecting fails with. */
async function connectError(connection: KafkaConnection): Promise<Error> {
  const admin = new TopicAdmin(connection);
  try {
    await admin.connect();
  } catch (error) {
    await admin.disconnect();
    return error as Error;
  }
  await admin.disconnect();
  throw new Error('connected, but should not have');
}

describe.each([
  ['scram-sha-512', () => broker.scram512],
  ['scram-sha-256', () => broker.scram256],
  ['plain', () => broker.plain],
])('Kafka over SASL_SSL with %s', (mechanism, user) => {
  const apps: INestMicroservice[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('creates topics, produces, consumes through the transport, reads records and lag', async () => {
    const connection = connectionFrom(securedEnv(mechanism, user()), mechanism);
    const admin = await connectAdmin(connection);
    closers.push(() => admin.disconnect());
    await admin.ensureTopics([
      { name: TEST_TOPIC, partitions: 2, replicationFactor: -1, retentionMs: 3_600_000 },
    ]);
    const producer = new BatchProducer(connection);
    await producer.connect();
    closers.push(() => producer.disconnect());

    const groupId = `${connection.topic('g')}`;
    const received: IncomingRecord[] = [];
    apps.push(await startConsumerApp(connection, groupId, (r) => void received.push(r)));
    await producer.send(
      ['a', 'b', 'c'].map((id) => ({ topic: TEST_TOPIC, key: id, value: `value-${id}` })),
    );
    await eventually(() => (received.length === 3 ? true : undefined), 30_000, '3 records');

    // The admin app's record reader (dead letters, replays) reads them back by position.
    const read: string[] = [];
    const positions = received.map((r) => ({ partition: r.partition, offset: r.offset }));
    const summary = await new RecordReader(connection).read(TEST_TOPIC, positions, (records) => {
      read.push(...records.map((r) => r.value!.toString()));
      return Promise.resolve();
    });
    expect(summary.found).toBe(3);
    expect(read.sort()).toEqual(['value-a', 'value-b', 'value-c']);

    // The consumer-lag exporter's admin client sees the group's commits (lag 0 once committed).
    const lag = new ConsumerLagReader(connection, [{ groupId, topics: [TEST_TOPIC] }]);
    await lag.connect();
    closers.push(() => lag.disconnect());
    await eventually(
      async () => ((await lag.read())[0]?.records === 0 ? true : undefined),
      30_000,
      'lag 0',
    );
  });
});

/** A logger keeping every line, to look for secrets in. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (...parts: unknown[]) => void this.lines.push(parts.map(String).join(' '));
  error = this.log;
  warn = this.log;
  debug = this.log;
  verbose = this.log;
  fatal = this.log;
}

describe('the apps against the secured broker', () => {
  const apps: INestApplication[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0).reverse()) await app.close();
  });

  it('ingest produces a call and the router consumes it over SASL_SSL (SCRAM-SHA-512)', async () => {
    const prefix = uniquePrefix('apps');
    const env = securedEnv('scram-sha-512', broker.scram512, {
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_TOPIC_PARTITIONS: '1',
      HTTP_HOST: '127.0.0.1',
      INGEST_PORT: '0',
      ROUTER_PORT: '0',
      LOG_LEVEL: 'error',
    });
    const ingest = await startIngest(loadIngestConfig(env));
    apps.push(ingest);
    apps.push(await startRouter(loadRouterConfig(env)));

    const writeKey = newWriteKey();
    await sql(`INSERT INTO source (name, write_key, enabled) VALUES ('secured', $1, true)`, [
      writeKey,
    ]);
    const cache = ingest.get(SettingsCache);
    await eventually(() => cache.sourceByWriteKey(writeKey), 10_000, 'the source in the cache');
    const res = await fetch(`${await ingest.getUrl()}/v1/track`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      },
      body: JSON.stringify({ userId: 'u-1', event: 'Secured', messageId: 'm-secured-1' }),
    });
    expect(res.status).toBe(200);

    // The call is on the calls topic, and the router's consumer group has committed past it:
    // both apps talked to Kafka over SASL_SSL.
    const connection = connectionFrom(env, 'apps', prefix);
    const admin = connection.admin();
    const lag = new ConsumerLagReader(connection, lagGroups(routerKafka(loadRouterConfig(env))));
    await Promise.all([admin.connect(), lag.connect()]);
    try {
      const ends = await admin.fetchTopicOffsets(connection.topic(TOPIC.calls));
      expect(ends.map((p) => Number(p.high))).toEqual([1]);
      await eventually(
        async () => ((await lag.read())[0]?.records === 0 ? true : undefined),
        30_000,
        'the router to commit the call',
      );
    } finally {
      await Promise.all([admin.disconnect(), lag.disconnect()]);
    }
  });

  it('a wrong password stops start-up with an error naming the variables, never the value', async () => {
    const wrong = `wrong-${broker.scram512.password}`;
    const logger = new CapturingLogger();
    const env = securedEnv('scram-sha-512', broker.scram512, {
      KAFKA_SASL_PASSWORD: wrong,
      KAFKA_TOPIC_PREFIX: uniquePrefix('wrong'),
      HTTP_HOST: '127.0.0.1',
      ROUTER_PORT: '0',
    });
    const started = startRouter(loadRouterConfig(env), { logger });
    const error = await started.then(
      (app) => {
        apps.push(app);
        throw new Error('the router started with a wrong password');
      },
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(KafkaSecurityError);
    expect(error.message).toBe(
      'Kafka SASL authentication failed (KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD): the broker refused the SCRAM-SHA-512 credentials',
    );
    const everything = [error.message, String(error.stack), ...logger.lines].join('\n');
    expect(logger.lines.length).toBeGreaterThan(0);
    for (const secret of [wrong, broker.scram512.password]) {
      expect(everything).not.toContain(secret);
    }
  });

  it('TLS to a plaintext listener stops start-up at the first attempt, not after retries', async () => {
    const logger = new CapturingLogger();
    const env = securedEnv('scram-sha-512', broker.scram512, {
      KAFKA_BROKERS: `127.0.0.1:${broker.plaintextPort}`,
      KAFKA_TOPIC_PREFIX: uniquePrefix('tls-plaintext'),
      HTTP_HOST: '127.0.0.1',
      ROUTER_PORT: '0',
    });
    const error = await startRouter(loadRouterConfig(env), { logger }).then(
      (app) => {
        apps.push(app);
        throw new Error('the router started against a plaintext listener');
      },
      (e: unknown) => e as Error,
    );
    expect(error.message).toContain('is it a plaintext listener? (KAFKA_SSL)');
    // One attempt's lines from kafkajs, not one per retry of every client.
    const kafkaLines = logger.lines.filter((line) => line.includes('Connection error'));
    expect(kafkaLines.length).toBeGreaterThan(0);
    expect(kafkaLines.length).toBeLessThanOrEqual(2);
  }, 60_000);
});

describe('TLS to the secured broker', () => {
  const scram = () => securedEnv('scram-sha-512', broker.scram512);

  it('names KAFKA_SASL_MECHANISM when the listener does not enable the mechanism', async () => {
    const env = { ...scram(), KAFKA_BROKERS: `127.0.0.1:${broker.plainOnlyPort}` };
    const error = await connectError(connectionFrom(env, 'mechanism'));
    expect(error).toBeInstanceOf(KafkaSecurityError);
    expect(error.message).toBe(
      'Kafka SASL mechanism SCRAM-SHA-512 is not enabled on the broker (KAFKA_SASL_MECHANISM)',
    );
  }, 60_000);

  it('names KAFKA_SSL when the listener speaks plaintext', async () => {
    const env = { ...scram(), KAFKA_BROKERS: `127.0.0.1:${broker.plaintextPort}` };
    const error = await connectError(connectionFrom(env, 'plaintext'));
    expect(error).toBeInstanceOf(KafkaSecurityError);
    expect(error.message).toMatch(
      /^Kafka TLS: the broker did not answer in TLS: is it a plaintext listener\? \(KAFKA_SSL\) \(/,
    );
  }, 60_000);

  it.each([
    ['a CA that did not sign it', { KAFKA_SSL_CA_FILE: () => broker.otherCaFile }],
    ['only the public CAs', { KAFKA_SSL_CA_FILE: () => '' }],
  ])(
    'refuses the broker certificate when trusting %s',
    async (_, vars) => {
      const env = { ...scram(), KAFKA_SSL_CA_FILE: vars.KAFKA_SSL_CA_FILE() };
      const error = await connectError(connectionFrom(env, 'untrusted'));
      expect(error).toBeInstanceOf(KafkaSecurityError);
      expect((error as KafkaSecurityError).code).toBe('KAFKA_TLS_FAILED');
      expect(error.message).toMatch(/^Kafka TLS: the broker's certificate is not signed by/);
      expect(error.message).not.toContain(broker.scram512.password);
    },
    60_000,
  );

  it('checks the host name unless told not to, and still checks the chain then', async () => {
    const viaName = { ...scram(), KAFKA_BROKERS: `localhost:${broker.port}` };
    const error = await connectError(connectionFrom(viaName, 'name'));
    expect(error.message).toContain('does not name the host in KAFKA_BROKERS');
    const unchecked = { ...viaName, KAFKA_SSL_CHECK_HOSTNAME: 'false' };
    const admin = await connectAdmin(connectionFrom(unchecked, 'no-name-check'));
    await admin.disconnect();
    const untrusted = { ...unchecked, KAFKA_SSL_CA_FILE: broker.otherCaFile };
    await expect(connectError(connectionFrom(untrusted, 'chain'))).resolves.toBeInstanceOf(
      KafkaSecurityError,
    );
  }, 90_000);

  it('authenticates with a client certificate where the listener requires one', async () => {
    const mtls = {
      KAFKA_BROKERS: broker.mtlsBrokers,
      DATABASE_URL: db.url,
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: broker.caFile,
    };
    const withCert = {
      ...mtls,
      KAFKA_SSL_CERT_FILE: broker.clientCertFile,
      KAFKA_SSL_KEY_FILE: broker.clientKeyFile,
    };
    const admin = await connectAdmin(connectionFrom(withCert, 'mtls'));
    await admin.disconnect();
    const error = await connectError(connectionFrom(mtls, 'no-cert'));
    expect(error.message).toContain('refused the client certificate');
  }, 60_000);
});

describe('OAUTHBEARER against the secured broker', () => {
  it('reads the token file at each authentication: a replaced token works without a restart', async () => {
    const tokenFile = join(broker.dir, 'token');
    // Not a JWT: Kafka's unsecured validator refuses it.
    writeFileSync(tokenFile, 'not-a-token');
    const connection = connectionFrom(
      {
        KAFKA_BROKERS: broker.brokers,
        DATABASE_URL: db.url,
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: broker.caFile,
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
      },
      'oauth',
    );
    const error = await connectError(connection);
    expect(error.message).toBe(
      'Kafka SASL authentication failed (KAFKA_SASL_OAUTHBEARER_TOKEN_FILE): the broker refused the OAUTHBEARER credentials',
    );
    writeFileSync(tokenFile, unsecuredJwt('app', Date.now() + 3_600_000));
    // The same connection authenticates with the new token, and requests work after it.
    const admin = connection.admin();
    await admin.connect();
    try {
      await expect(admin.listTopics()).resolves.toEqual(expect.any(Array));
    } finally {
      await admin.disconnect();
    }
  }, 60_000);
});

async function sql(text: string, params: unknown[]): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(text, params);
  } finally {
    await client.end();
  }
}
