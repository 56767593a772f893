import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { buildToTemporaryDir } from '../../helpers/build';
import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness } from '../../helpers/router-harness';
import { eventually, scrapeMetric, serviceEnv } from '../../helpers/services';

const DEDUPLICATED = 'sluice_router_calls_deduplicated_total';

/** A free loopback port (the router's /metrics must be reachable at a known address). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * De-duplication by (source, user, messageId) per calls partition within the window
 * (ROUTER_DEDUP_WINDOW_SECONDS, on by default): ingest accepts every copy (200), the router
 * delivers one and counts the others;
 * what the router saw survives a restart of its process, rebuilt from Kafka.
 */
describe('de-duplication by messageId', () => {
  const h = new RouterHarness();
  let source: TestSource;
  let buildDir: string | undefined;
  const children: ChildProcess[] = [];

  const track = (messageId: string, userId = 'user-1') => ({
    type: 'track',
    userId,
    event: 'Signed Up',
    messageId,
  });

  beforeAll(async () => {
    buildDir = buildToTemporaryDir();
    await h.start();
    source = await h.source();
    await h.destination(source.id);
  });

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await h.close();
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  it('delivers once a call sent twice in one batch, and counts the copy', async () => {
    const messageId = randomUUID();
    const before = await scrapeMetric(h.routerUrl, DEDUPLICATED);
    const answer = await h.post(
      '/v1/batch',
      { batch: [track(messageId), track(randomUUID()), track(messageId)] },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    await h.settled();
    expect(h.deliveriesOf(messageId)).toHaveLength(1);
    await expect(scrapeMetric(h.routerUrl, DEDUPLICATED, { type: 'track' })).resolves.toBe(
      before + 1,
    );
  });

  it('delivers once a call sent again in a later request (a client retry)', async () => {
    const messageId = randomUUID();
    for (let i = 0; i < 3; i += 1) {
      const answer = await h.post('/v1/track', track(messageId), { basic: source.writeKey });
      expect(answer.status).toBe(200);
    }
    await h.settled();
    expect(h.deliveriesOf(messageId)).toHaveLength(1);
  });

  it('delivers the calls of five users of one source that share a messageId (on two partitions, three at least share one)', async () => {
    const messageId = randomUUID();
    const users = ['user-a', 'user-b', 'user-c', 'user-d', 'user-e'];
    const answer = await h.post(
      '/v1/batch',
      { batch: users.map((user) => track(messageId, user)) },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    await h.settled();
    expect(h.deliveriesOf(messageId)).toHaveLength(users.length);
  });

  it('delivers both calls of two sources that share a messageId', async () => {
    const other = await h.source();
    await h.destination(other.id);
    const messageId = randomUUID();
    await h.post('/v1/track', track(messageId), { basic: source.writeKey });
    await h.post('/v1/track', track(messageId), { basic: other.writeKey });
    await h.settled();
    expect(h.deliveriesOf(messageId)).toHaveLength(2);
  });

  it('still delivers once a call sent again after the router process restarted', async () => {
    // The harness's in-process router leaves the group; routers run as processes from here.
    await h.router.close();
    Object.assign(h, { router: { close: () => Promise.resolve() } });
    const first = randomUUID();
    const router = await startRouterProcess();
    await h.post('/v1/track', track(first), { basic: source.writeKey });
    await h.settled();
    expect(h.deliveriesOf(first)).toHaveLength(1);
    await stop(router.child);
    const again = await startRouterProcess();
    const fresh = randomUUID();
    await h.post('/v1/batch', { batch: [track(first), track(fresh)] }, { basic: source.writeKey });
    await h.settled();
    expect(h.deliveriesOf(fresh)).toHaveLength(1);
    expect(h.deliveriesOf(first)).toHaveLength(1);
    await expect(scrapeMetric(again.url, DEDUPLICATED, { type: 'track' })).resolves.toBe(1);
  });

  /** The router as `npm run build` builds it, on the harness's database and topics. */
  async function startRouterProcess(): Promise<{ child: ChildProcess; url: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, [join(buildDir!, 'apps', 'router', 'src', 'main.js')], {
      env: {
        ...process.env,
        KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
        DATABASE_URL: h.db.url,
        KAFKA_TOPIC_PREFIX: h.prefix,
        KAFKA_TOPIC_PARTITIONS: '2',
        HTTP_HOST: '127.0.0.1',
        ROUTER_PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await eventually(
      async () =>
        (await fetch(`${url}/health/live`).catch(() => undefined))?.ok ? true : undefined,
      30_000,
      'the router process to answer',
    );
    return { child, url };
  }

  async function stop(child: ChildProcess): Promise<void> {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});
