import { randomBytes } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadAdminConfig } from '../../../apps/admin/src/config';
import { startAdmin } from '../../../apps/admin/src/main';
import { loadDispatcherConfig } from '../../../apps/dispatcher/src/config';
import { startDispatcher } from '../../../apps/dispatcher/src/main';
import { loadIngestConfig } from '../../../apps/ingest/src/config';
import { startIngest } from '../../../apps/ingest/src/main';
import { loadRouterConfig } from '../../../apps/router/src/config';
import { startRouter } from '../../../apps/router/src/main';
import { MemoryCluster } from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { callAdmin } from '../../helpers/admin-harness';
import { eventually, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../../helpers/services';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/**
 * The whole path of a call, tracking route to webhook, with the four apps in this process on
 * an in-memory Kafka (no broker; PostgreSQL as always). The real-broker e2e tests cover the
 * same path against Kafka; this one is the quick check of the apps' wiring and of libs/kafka's
 * transport and producer, which run unchanged on the in-memory cluster.
 */
describe('a call through ingest, router and dispatcher on an in-memory Kafka', () => {
  const apps: NestFastifyApplication[] = [];
  let cluster: MemoryCluster;
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = MemoryCluster.open(`flow-${randomBytes(4).toString('hex')}`);
    [database, receiver] = await Promise.all([
      createMigratedTestDatabase(),
      new WebhookReceiver().start(),
    ]);
    env = {
      KAFKA_BROKERS: `memory://${cluster.name}:0`,
      DATABASE_URL: database.url,
      KAFKA_TOPIC_PREFIX: '',
      KAFKA_TOPIC_PARTITIONS: '2',
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      INGEST_PORT: '0',
      ADMIN_PORT: '0',
      ROUTER_PORT: '0',
      DISPATCHER_PORT: '0',
      ADMIN_TOKENS: TEST_ADMIN_TOKEN,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      DISPATCHER_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      // Rebuilding the de-duplication reads the calls topic back by time: not in memory.
      ROUTER_DEDUP_WINDOW_SECONDS: '0',
    };
    apps.push(await startAdmin(loadAdminConfig(env)));
    apps.push(await startIngest(loadIngestConfig(env)));
    apps.push(await startRouter(loadRouterConfig(env)));
    apps.push(await startDispatcher(loadDispatcherConfig(env)));
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await receiver?.stop();
    await database?.drop();
    cluster?.close();
  });

  it('delivers a tracked call to the webhook, and its outcome to the ledger', async () => {
    const [admin, ingest] = await Promise.all(apps.slice(0, 2).map((app) => app.getUrl()));
    const api = (method: string, path: string, body?: unknown) =>
      callAdmin(`${admin}/admin/v1`, method, path, body);
    const source = (await api('POST', '/sources', { name: 'In memory' })).body;
    const destination = `/sources/${source.id}/destination`;
    expect((await api('POST', destination, { name: 'Hooks' })).status).toBe(201);
    expect((await api('POST', `${destination}/webhooks`, { url: receiver.url() })).status).toBe(
      201,
    );
    expect((await api('POST', `${destination}/enable`)).status).toBe(200);

    // The router and the dispatcher route and send by their settings caches: wait for both.
    for (const app of apps.slice(2)) {
      const cache = app.get(SettingsCache);
      await eventually(
        () => (cache.destinationsForSource(source.id)[0]?.enabled ? true : undefined),
        10_000,
        'the enabled destination in the settings caches',
      );
    }

    const call = { userId: 'u-1', event: 'In memory', messageId: 'm-in-memory-1' };
    // Ingest knows the write key once its settings cache has the new source.
    await eventually(async () => {
      const res = await fetch(`${ingest}/v1/track`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
        },
        body: JSON.stringify(call),
      });
      return res.status === 200 ? true : undefined;
    }, 10_000);

    const [request] = await receiver.received(1, 10_000);
    expect(JSON.parse(request.body.toString('utf8'))).toMatchObject({
      type: 'track',
      version: 1,
      ...call,
    });
    expect(request.path).toBe('/hook');
    // The dispatcher's outcome reaches the admin app's ledger writer through the cluster too.
    const query = `messageId=${call.messageId}&outcome=delivered`;
    await eventually(
      async () =>
        (await api('GET', `/deliveries?${query}`)).body?.items?.length ? true : undefined,
      10_000,
      'the delivered row of the ledger',
    );
  });
});
