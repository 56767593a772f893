import { randomUUID } from 'node:crypto';

import { ReadyAnswer } from '../../helpers/app-process';
import { PipelineHarness } from '../../helpers/pipeline-harness';
import { RouterHarness } from '../../helpers/router-harness';
import { eventually, scrapeMetric } from '../../helpers/services';
import { SpareBroker } from '../../helpers/spare-broker';

async function ready(baseUrl: string): Promise<ReadyAnswer> {
  const res = await fetch(`${baseUrl}/health/ready`);
  return { status: res.status, body: (await res.json()) as ReadyAnswer['body'] };
}

/** Waits until `/health/ready` of `baseUrl` answers what `check` wants; returns that answer. */
function readyWhen(
  baseUrl: string,
  check: (answer: ReadyAnswer) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<ReadyAnswer> {
  return eventually(
    async () => {
      const answer = await ready(baseUrl);
      return check(answer) ? answer : undefined;
    },
    timeoutMs,
    what,
  );
}

/**
 * Readiness tells whether an app can do its job now: ingest and the router stay ready while
 * PostgreSQL is away (they work from their settings cache), the admin API is not; a router
 * whose consumer is not consuming is not ready, and is again once it consumes.
 */
describe('readiness', () => {
  describe('PostgreSQL unreachable', () => {
    const h = new PipelineHarness();

    beforeAll(async () => {
      await h.start();
    });

    afterAll(async () => {
      await h.restoreDatabase();
      await h.close();
    });

    it('keeps ingest and the router ready (degraded) and takes the admin API out', async () => {
      const source = await h.apiSource();
      await h.cutOffDatabase();
      const postgresDown = (a: ReadyAnswer) => a.body.checks?.postgres === 'down';
      const ingest = await readyWhen(h.url, postgresDown, 'ingest to see PostgreSQL down');
      const router = await readyWhen(h.routerUrl, postgresDown, 'the router to see it');
      const admin = await readyWhen(h.adminUrl, postgresDown, 'admin to see it');
      const degraded = {
        status: 200,
        body: {
          status: 'degraded',
          checks: { kafka: 'up', settings: 'up', postgres: 'down', consumers: 'up' },
        },
      };
      expect(ingest).toEqual(degraded);
      expect(router).toEqual(degraded);
      expect(admin).toMatchObject({ status: 503, body: { status: 'unavailable' } });
      await expect(scrapeMetric(h.url, 'sluice_ready')).resolves.toBe(1);
      await expect(
        scrapeMetric(h.url, 'sluice_dependency_up', { dependency: 'postgres' }),
      ).resolves.toBe(0);
      await expect(scrapeMetric(h.adminUrl, 'sluice_ready')).resolves.toBe(0);

      // Ready means working: a call is accepted and routed meanwhile.
      const messageId = randomUUID();
      const answer = await h.post(
        '/v1/track',
        { userId: 'u', event: 'E', messageId },
        { basic: source.writeKey },
      );
      expect(answer.status).toBe(200);
      await h.delivery(messageId);

      await h.restoreDatabase();
      for (const url of [h.url, h.routerUrl, h.adminUrl]) {
        await readyWhen(url, (a) => a.status === 200 && a.body.status === 'ok', `${url} ok`);
      }
    });
  });

  describe('the router against a broker that stops', () => {
    const broker = new SpareBroker();
    const h = new RouterHarness();

    beforeAll(async () => {
      await broker.start();
      await h.start({ KAFKA_BROKERS: broker.brokers });
    });

    afterAll(async () => {
      await h.close();
      await broker.destroy();
    });

    it('is not ready while its consumer is not consuming, and routes again once it is', async () => {
      const source = await h.source();
      await h.destination(source.id);
      await readyWhen(h.routerUrl, (a) => a.body.status === 'ok', 'the router ok');

      await broker.stop();
      const down = await readyWhen(
        h.routerUrl,
        (a) => a.body.checks?.consumers === 'down',
        'the router to see its consumer stop',
        90_000,
      );
      expect(down.status).toBe(503);
      expect(down.body.status).toBe('unavailable');

      await broker.start();
      const backAt = Date.now();
      await readyWhen(h.routerUrl, (a) => a.status === 200, 'the router ready again', 60_000);
      const messageId = randomUUID();
      const answer = await h.post(
        '/v1/track',
        { userId: 'u', event: 'E', messageId },
        { basic: source.writeKey },
      );
      expect(answer.status).toBe(200);
      await h.delivery(messageId);
      // Its own dead member does not hold the group for a session timeout (8 s) after the
      // broker is back: the restarted consumer rejoins under its member id.
      expect(Date.now() - backAt).toBeLessThan(8_000);
    });
  });
});
