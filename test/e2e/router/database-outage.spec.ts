import { randomUUID } from 'node:crypto';

import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness } from '../../helpers/router-harness';
import { eventually } from '../../helpers/services';

/**
 * The settings database becomes unreachable (only this test's database: new connections
 * refused, open ones terminated; the shared server stays up). Ingest keeps authenticating
 * from its cache and the router keeps routing from its own; once the database is back, the
 * router reconnects and follows the next change.
 */
describe('PostgreSQL unreachable', () => {
  const h = new RouterHarness();
  let source: TestSource;

  beforeAll(async () => {
    await h.start();
    source = await h.source();
    await h.destination(source.id);
  });

  afterAll(async () => {
    await h.restoreDatabase();
    await h.close();
  });

  /** Sends one call through ingest's HTTP API; returns its message id. */
  async function postCall(userId: string): Promise<string> {
    const messageId = randomUUID();
    const answer = await h.post(
      '/v1/track',
      { userId, event: 'E', messageId },
      { basic: source.writeKey },
    );
    expect(answer).toEqual({ status: 200, body: { success: true } });
    return messageId;
  }

  it('keeps routing from the cache while the database is away', async () => {
    await h.delivery(await postCall('before'));
    await h.cutOffDatabase();
    const cache = h.routerSettings;
    await eventually(
      () => (cache.stats.listening ? undefined : true),
      10_000,
      'the router to lose its LISTEN connection',
    );
    const failedBefore = cache.stats.failedReloads;
    await cache.refresh();
    expect(cache.stats.failedReloads).toBeGreaterThan(failedBefore);
    const during: string[] = [];
    for (let i = 0; i < 20; i += 1) during.push(await postCall(`during-${i % 4}`));
    for (const messageId of during) await h.delivery(messageId);
    await h.settled();
    for (const messageId of during) expect(h.deliveriesOf(messageId)).toHaveLength(1);
  });

  it('reconnects once the database is back and follows the next change', async () => {
    await h.restoreDatabase();
    const cache = h.routerSettings;
    await eventually(
      () => (cache.stats.listening && cache.stats.reloads.reconnect > 0 ? true : undefined),
      45_000,
      'the router to reconnect to the database',
    );
    await h.sql(`UPDATE destination SET enabled = false WHERE source_id = $1`, [source.id]);
    await h.routerSees('the disabled destination', (d) => d?.enabled === false, source.id);
    const after = await postCall('after');
    await h.settled();
    expect(h.deliveriesOf(after)).toEqual([]);
    await expect(
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'destination_disabled' }),
    ).resolves.toBe(1);
  });
});
