import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';

import { AppProcess, freePort } from '../../helpers/app-process';
import { buildToTemporaryDir } from '../../helpers/build';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { Arrival, ReceiverProcess } from '../../helpers/receiver-process';
import { eventually, scrapeMetric } from '../../helpers/services';

const CALLS = 5_000;
const LIMIT_PER_SECOND = 50;
/** The most requests the limited receiver may see in any one second. */
const MOST_IN_A_SECOND = 53;
const BATCH = 100;

/**
 * The most requests in any window [t, t + 1000 ms) of the receiver's timestamps (a sliding
 * window starting at each request; the busiest window always starts at one), and when it
 * starts.
 */
function busiestSecond(arrivals: readonly Arrival[]): { count: number; at: number } {
  const times = arrivals.map((r) => r.at).sort((a, b) => a - b);
  let busiest = { count: 0, at: 0 };
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end] - times[start] >= 1000) start += 1;
    if (end - start + 1 > busiest.count) busiest = { count: end - start + 1, at: times[start] };
  }
  return busiest;
}

/** Once every one of `ids` has arrived at `receiver`: every arrival. */
function allArrived(
  receiver: ReceiverProcess,
  ids: readonly string[],
  timeoutMs: number,
): Promise<Arrival[]> {
  return eventually(
    async () => {
      const got = await receiver.received();
      const seen = new Set(got.map((r) => r.messageId));
      return ids.every((id) => seen.has(id)) ? got : undefined;
    },
    timeoutMs,
    `all ${ids.length} calls at ${receiver.url()}`,
  );
}

/**
 * A destination limited to 50 deliveries a second, served by TWO dispatcher processes (each
 * owning its share of the partitions once the groups settle), with 5,000 calls queued: the
 * receiver never sees more than 53 in any second, and every call arrives. A second,
 * unlimited destination of the same source, on the same partitions, takes its 5,000 at full
 * speed meanwhile. Ingest and the router run in this process; the dispatchers run from a
 * build, as in production.
 */
describe('a destination rate limit across two dispatcher processes', () => {
  const harness = new DispatcherHarness();
  let buildDir: string;
  let limited: ReceiverProcess;
  let unlimited: ReceiverProcess;
  const dispatchers: AppProcess[] = [];

  beforeAll(async () => {
    buildDir = buildToTemporaryDir();
    await harness.start({}, false);
    limited = await new ReceiverProcess().start();
    unlimited = await new ReceiverProcess().start();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(dispatchers.map((d) => d.stop()));
    await limited?.stop();
    await unlimited?.stop();
    await harness.close();
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  /** Starts a dispatcher process and waits until it is ready. */
  async function startDispatcher(): Promise<AppProcess> {
    const port = await freePort();
    const dispatcher = new AppProcess(buildDir, 'dispatcher', port, {
      ...harness.dispatcherEnv,
      DISPATCHER_PORT: String(port),
    }).start();
    dispatchers.push(dispatcher);
    await eventually(
      async () => ((await dispatcher.ready())?.status === 200 ? true : undefined),
      60_000,
      `dispatcher on ${port} ready`,
    );
    return dispatcher;
  }

  it('holds 50/s at the receiver, delivers all 5,000, and leaves the other destination at full speed', async () => {
    const source = await harness.source();
    const slow = await harness.webhookDestination(source.id, {
      name: 'limited',
      urls: [limited.url()],
    });
    await harness.sql('UPDATE destination SET rate_limit_per_second = $1 WHERE id = $2', [
      LIMIT_PER_SECOND,
      slow.id,
    ]);
    await harness.webhookDestination(source.id, { name: 'unlimited', urls: [unlimited.url()] });

    const [first, second] = [await startDispatcher(), await startDispatcher()];
    // Settled: each owns half of the delivery partitions (1 of 2 main, 2 of 4 tier ones).
    await eventually(
      async () => {
        const shares = await Promise.all(
          [first, second].map((d) =>
            scrapeMetric(d.url, 'sluice_dispatcher_rate_limit_share_ratio'),
          ),
        );
        return shares.every((share) => share === 0.5) ? shares : undefined;
      },
      60_000,
      'both dispatchers owning half of the partitions',
    );

    const ids: string[] = [];
    for (let batch = 0; batch < CALLS / BATCH; batch += 1) {
      const calls = Array.from({ length: BATCH }, (_, i) => {
        const messageId = `rate-${batch}-${i}-${randomUUID()}`;
        ids.push(messageId);
        return { type: 'track', userId: `u-${(batch * BATCH + i) % 97}`, event: 'Load', messageId };
      });
      const answer = await harness.post('/v1/batch', { batch: calls }, { basic: source.writeKey });
      expect(answer.status).toBe(200);
    }

    // The unlimited destination gets everything within seconds, while the limited one has
    // had a small part of its calls.
    const fast = await allArrived(unlimited, ids, 120_000);
    const unlimitedFirst = Math.min(...fast.map((r) => r.at));
    const unlimitedLast = Math.max(...fast.map((r) => r.at));
    const limitedByThen = (await limited.received()).filter((r) => r.at <= unlimitedLast).length;
    const arrivals = await allArrived(limited, ids, 300_000);
    expect(new Set(arrivals.map((r) => r.messageId)).size).toBe(CALLS);
    const busiest = busiestSecond(arrivals);
    const most = busiest.count;
    const limitedFirst = Math.min(...arrivals.map((r) => r.at));
    const limitedLast = Math.max(...arrivals.map((r) => r.at));
    process.stdout.write(
      `rate limit e2e: busiest second ${most} (sliding 1 s windows) at ${
        (busiest.at - limitedFirst) / 1000
      } s, limited ${arrivals.length} requests in ${
        (limitedLast - limitedFirst) / 1000
      } s; unlimited ${fast.length} requests in ${(unlimitedLast - unlimitedFirst) / 1000} s, the limited one had ${limitedByThen} by then\n`,
    );
    expect(most).toBeLessThanOrEqual(MOST_IN_A_SECOND);
    // At least once: a redelivery is allowed, a missing call is not.
    expect(arrivals.length).toBeGreaterThanOrEqual(CALLS);
    // Full speed beside it: the unlimited destination was done long before the limited one,
    // which had less than half of its calls by then (5,000 at 50/s take 100 s).
    expect(unlimitedLast - unlimitedFirst).toBeLessThan((limitedLast - limitedFirst) / 3);
    expect(limitedByThen).toBeLessThan(CALLS / 2);
    // The limit delayed deliveries on both processes, and the counter names the destination.
    for (const dispatcher of [first, second]) {
      await expect(
        scrapeMetric(dispatcher.url, 'sluice_dispatcher_rate_limited_total', {
          destination_id: slow.id,
        }),
      ).resolves.toBeGreaterThan(0);
    }
  }, 420_000);
});
