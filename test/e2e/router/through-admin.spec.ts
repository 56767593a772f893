import { randomUUID } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadAdminConfig } from '../../../apps/admin/src/config';
import { startAdmin } from '../../../apps/admin/src/main';
import { HEADER } from '@app/contracts';
import { headerText } from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { RouterHarness } from '../../helpers/router-harness';
import { eventually, serviceEnv, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../../helpers/services';
import { json } from '../../helpers/topic-reader';

/**
 * The whole control path: a source and its destination made through the admin API, calls
 * sent through ingest, deliveries found on sluice.deliveries.v1; a change made through the
 * admin API reaches the router within one second.
 */
describe('admin API, ingest and router together', () => {
  const h = new RouterHarness();
  let admin: NestFastifyApplication;
  let adminUrl: string;

  beforeAll(async () => {
    await h.start();
    admin = await startAdmin(
      loadAdminConfig({
        KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
        DATABASE_URL: h.db.url,
        KAFKA_TOPIC_PREFIX: h.prefix,
        HTTP_HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        LOG_LEVEL: 'error',
        ADMIN_TOKENS: TEST_ADMIN_TOKEN,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      }),
    );
    adminUrl = await admin.getUrl();
  });

  afterAll(async () => {
    await admin?.close();
    await h.close();
  });

  async function call(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${adminUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status).toBeLessThan(300);
    return res.json();
  }

  it('delivers calls of a source configured through the admin API, and follows its changes', async () => {
    const source = await call('POST', '/sources', { name: 'shop' });
    const dest = `/sources/${source.id}/destination`;
    const destination = await call('POST', dest, { name: 'hooks' });
    await call('POST', `${dest}/webhooks`, { url: 'https://hooks.example.com/a' });
    await call('POST', `${dest}/enable`);
    // Ingest learns the new write key through its settings cache.
    const cache = h.app.get(SettingsCache);
    await eventually(
      () => cache.sourceByWriteKey(source.writeKey as string),
      5_000,
      'the write key',
    );
    // The router learns the enabled destination the same way, a few milliseconds later.
    await h.routerSees('the enabled destination', (d) => d?.enabled === true, source.id);

    const messageId = randomUUID();
    const answer = await h.post(
      '/v1/track',
      { userId: 'u-1', event: 'Paid', messageId },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    // Once the router has routed everything on the topic, the delivery is there or never was.
    await h.settled();
    const [delivery] = h.deliveriesOf(messageId);
    expect(delivery).toBeDefined();
    expect(delivery.key?.toString()).toBe(`${destination.id}:u-1`);
    expect(headerText(delivery, HEADER.destinationId)).toBe(destination.id);
    expect(json(delivery)).toMatchObject({
      version: 1,
      type: 'track',
      event: 'Paid',
      userId: 'u-1',
      messageId,
    });

    // Disabled through the API: calls sent a second later are no longer delivered.
    await call('POST', `${dest}/disable`);
    const disabledAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() - disabledAt)));
    const late = randomUUID();
    await h.post(
      '/v1/track',
      { userId: 'u-1', event: 'Paid', messageId: late },
      { basic: source.writeKey },
    );
    await h.settled();
    expect(h.deliveriesOf(late)).toEqual([]);
  });
});
