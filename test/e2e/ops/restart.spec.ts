import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';

import { HEADER, TOPIC } from '@app/contracts';

import { AppProcess, freePort, ReadyAnswer } from '../../helpers/app-process';
import { buildToTemporaryDir } from '../../helpers/build';
import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { eventually, serviceEnv } from '../../helpers/services';
import { TopicReader } from '../../helpers/topic-reader';

/**
 * The targets of a restart: deliveries flow again within these once the new process answers
 * HTTP (its boot, seconds on a busy 2-core machine, is not the group's doing and not counted).
 */
const AFTER_SIGKILL_MS = 10_000;
const AFTER_SIGTERM_MS = 3_000;

/**
 * Restarts of apps run as their own processes (built as `npm run build` builds them), against
 * the shared broker and database: an app's HTTP server answers while its consumer group join
 * waits for a killed member's session to expire; the router's readiness says so; deliveries
 * flow again within the targets; a graceful stop commits what it finished, so a restart routes
 * nothing twice.
 */
describe('restarts of app processes', () => {
  const h = new IngestHarness();
  let buildDir: string;
  let deliveries: TopicReader;
  let source: TestSource;
  const processes: AppProcess[] = [];

  function appProcess(app: 'ingest' | 'router', port: number, env: Record<string, string> = {}) {
    const proc = new AppProcess(buildDir, app, port, {
      KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
      DATABASE_URL: h.db.url,
      KAFKA_TOPIC_PREFIX: h.prefix,
      KAFKA_TOPIC_PARTITIONS: '2',
      HTTP_HOST: '127.0.0.1',
      [`${app.toUpperCase()}_PORT`]: String(port),
      LOG_LEVEL: 'error',
      ...env,
    });
    processes.push(proc);
    return proc;
  }

  /** Sends one track call through the in-process ingest; returns its message id. */
  async function track(userId = 'u'): Promise<string> {
    const messageId = `restart-${randomUUID()}`;
    const answer = await h.post(
      '/v1/track',
      { userId, event: 'E', messageId },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    return messageId;
  }

  function delivered(messageId: string): number {
    return deliveries.withHeader(TOPIC.deliveries, HEADER.messageId, messageId).length;
  }

  beforeAll(async () => {
    buildDir = buildToTemporaryDir();
    await h.start();
    source = await h.source();
    await h.sql(
      `WITH d AS (
         INSERT INTO destination (source_id, kind, name, enabled)
         VALUES ($1, 'webhooks', 'hooks', true) RETURNING id
       )
       INSERT INTO webhook (destination_id, position, url, headers)
       SELECT d.id, 0, 'https://example.com/hook', '{}'::jsonb FROM d`,
      [source.id],
    );
    deliveries = await new TopicReader(h.connection, [TOPIC.deliveries]).start();
  });

  afterAll(async () => {
    for (const proc of processes) await proc.stop('SIGKILL');
    await deliveries?.stop();
    await h.close();
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  it('ingest answers the tracking API while its ingress consumer waits to join', async () => {
    const port = await freePort();
    const first = appProcess('ingest', port).start();
    await eventually(
      async () => ((await first.ready())?.body.checks?.consumers === 'up' ? true : undefined),
      30_000,
      'the first ingest process consuming',
    );
    await first.stop('SIGKILL');
    const second = appProcess('ingest', port).start();
    // The killed member holds the ingress group until its session expires; meanwhile the
    // tracking API must already answer, and readiness say ready but degraded.
    const during = await eventually(
      async () => {
        const ready = await second.ready();
        if (ready === undefined) return undefined;
        const res = await fetch(`${second.url}/v1/track`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
          },
          body: JSON.stringify({ userId: 'u', event: 'E', messageId: randomUUID() }),
        });
        return { ready, track: res.status };
      },
      20_000,
      'the restarted ingest answering',
    );
    expect(during.track).toBe(200);
    expect(during.ready).toEqual({
      status: 200,
      body: { status: 'degraded', checks: expect.objectContaining({ consumers: 'down' }) },
    });
    await eventually(
      async () => ((await second.ready())?.body.status === 'ok' ? true : undefined),
      30_000,
      'the restarted ingest consuming',
    );
    await second.stop('SIGTERM');
  });

  /**
   * Stops the router with `signal`, starts it again at once, and sends a call at every poll
   * until one is delivered; returns how long that took after the new process first answered
   * HTTP, and every readiness answer seen meanwhile.
   */
  async function restartRouter(
    router: AppProcess,
    signal: NodeJS.Signals,
    port: number,
  ): Promise<{ recoveryMs: number; readiness: ReadyAnswer[]; next: AppProcess }> {
    await router.stop(signal);
    const next = appProcess('router', port, { ROUTER_DEDUP_WINDOW_SECONDS: '0' }).start();
    const readiness: ReadyAnswer[] = [];
    const sent: string[] = [];
    let answeredAt: number | undefined;
    await eventually(
      async () => {
        const ready = await next.ready();
        if (ready) {
          answeredAt ??= Date.now();
          readiness.push(ready);
        }
        sent.push(await track());
        return sent.some((id) => delivered(id) > 0) ? true : undefined;
      },
      40_000,
      `deliveries after the router's ${signal}`,
    );
    return { recoveryMs: Date.now() - (answeredAt ?? 0), readiness, next };
  }

  it('the router delivers again soon after a SIGKILL, not ready until it has joined', async () => {
    const port = await freePort();
    const router = appProcess('router', port, { ROUTER_DEDUP_WINDOW_SECONDS: '0' }).start();
    const first = await track();
    await eventually(() => (delivered(first) > 0 ? true : undefined), 30_000, 'first delivery');
    expect(await router.ready()).toMatchObject({ status: 200, body: { status: 'ok' } });

    const { recoveryMs, readiness, next } = await restartRouter(router, 'SIGKILL', port);
    expect(recoveryMs).toBeLessThan(AFTER_SIGKILL_MS);
    // While the new member waited for the killed one's session, it answered but was not ready.
    expect(readiness).toContainEqual({
      status: 503,
      body: { status: 'unavailable', checks: expect.objectContaining({ consumers: 'down' }) },
    });
    await eventually(
      async () => ((await next.ready())?.status === 200 ? true : undefined),
      10_000,
      'the restarted router ready',
    );
    await next.stop('SIGTERM');
  });

  it('a SIGTERM commits what the router finished: delivers again within 3 s, nothing twice', async () => {
    const port = await freePort();
    const router = appProcess('router', port, { ROUTER_DEDUP_WINDOW_SECONDS: '0' }).start();
    const warm = await track();
    await eventually(() => (delivered(warm) > 0 ? true : undefined), 30_000, 'first delivery');

    // Calls keep coming, 4 at a time, while the router stops and starts again.
    const ids: string[] = [warm];
    let sending = true;
    const load = (async () => {
      while (sending) {
        ids.push(...(await Promise.all(Array.from({ length: 4 }, (_, i) => track(`u${i}`)))));
      }
    })();
    await eventually(() => (ids.length > 200 ? true : undefined), 30_000, 'calls under way');
    const { recoveryMs, next } = await restartRouter(router, 'SIGTERM', port);
    sending = false;
    await load;

    await eventually(
      () => (ids.every((id) => delivered(id) > 0) ? true : undefined),
      30_000,
      'every call delivered',
    );
    const twice = ids.filter((id) => delivered(id) > 1);
    expect(twice).toEqual([]);
    expect(recoveryMs).toBeLessThan(AFTER_SIGTERM_MS);
    await next.stop('SIGTERM');
  });
});
