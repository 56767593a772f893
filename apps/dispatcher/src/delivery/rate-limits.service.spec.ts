import { Metrics } from '@app/observability';

import { DestinationRateLimits } from './rate-limits.service';

const MAIN = ['sluice.deliveries.v1'];
const TIERS = ['sluice.deliveries.retry.10s.v1', 'sluice.deliveries.retry.1m.v1'];
const D = 'd-1';

describe(DestinationRateLimits.name, () => {
  let metrics: Metrics;

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    metrics = new Metrics('test');
  });

  afterEach(() => jest.useRealTimers());

  /** Limits on a replica owning `main` of 2 main partitions and `tiers` of 4 tier partitions. */
  function limits(main: number[], tiers: number[]): DestinationRateLimits {
    const made = new DestinationRateLimits(
      { partitionsPerTopic: 2, groups: [MAIN, TIERS], now: () => Date.now() },
      metrics,
    );
    made.assigned(MAIN, new Map([[MAIN[0], main]]));
    made.assigned(TIERS, new Map([[TIERS[0], tiers.filter((p) => p < 2)]]));
    return made;
  }

  async function delayed(): Promise<number> {
    const metric = await metrics.registry
      .getSingleMetric('sluice_dispatcher_rate_limited_total')
      ?.get();
    return metric?.values.find((v) => v.labels.destination_id === D)?.value ?? 0;
  }

  it('shows the fraction of the partitions it owns', async () => {
    limits([0], [0]);
    const share = await metrics.registry
      .getSingleMetric('sluice_dispatcher_rate_limit_share_ratio')
      ?.get();
    // 1 of 2 main partitions and 1 of 4 tier partitions.
    expect(share?.values[0]?.value).toBeCloseTo(2 / 6, 9);
  });

  it('lets every delivery of a destination without a limit through', async () => {
    const rates = limits([0], [0]);
    for (let i = 0; i < 100; i += 1) expect(rates.tryTake(D, null)).toBe(true);
    await expect(delayed()).resolves.toBe(0);
  });

  it("gives a replica its partitions' share: half of 40/s less the headroom, 19/s", async () => {
    const rates = limits([0], [0, 1]);
    // Owns 1 of 2 main and 2 of 4 tier partitions: 3 of 6.
    expect(rates.tryTake(D, 40)).toBe(true);
    expect(rates.tryTake(D, 40)).toBe(false);
    expect(rates.hasToken(D, 40)).toBe(false);
    // A token each 1000 / 19 = 52.6 ms.
    jest.advanceTimersByTime(52);
    expect(rates.tryTake(D, 40)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(rates.tryTake(D, 40)).toBe(true);
    await expect(delayed()).resolves.toBe(3);
  });

  it('gives nothing while a rebalance is under way, and the new share after it', () => {
    const rates = limits([0, 1], [0, 1]);
    expect(rates.tryTake(D, 10)).toBe(true);
    rates.assigned(MAIN, undefined);
    rates.assigned(TIERS, undefined);
    jest.advanceTimersByTime(10_000);
    expect(rates.tryTake(D, 10)).toBe(false);
    rates.assigned(MAIN, new Map([[MAIN[0], [0, 1]]]));
    rates.assigned(TIERS, new Map([[TIERS[0], [0, 1]]]));
    // 4 of 6 partitions: 10/s x 4/6 x 0.95, a token each 157.9 ms.
    jest.advanceTimersByTime(157);
    expect(rates.tryTake(D, 10)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(rates.tryTake(D, 10)).toBe(true);
  });

  it('makes a waiting delivery wait for its token, then go', async () => {
    const rates = limits([0, 1], [0, 1]);
    // Owns 4 of 6: 15/s x 4/6 x 0.95 = 9.5/s, a token each 105.3 ms.
    expect(rates.tryTake(D, 15)).toBe(true);
    let done = false;
    const waiting = rates.take(D, 15).then(() => (done = true));
    await jest.advanceTimersByTimeAsync(105);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await waiting;
    expect(done).toBe(true);
  });

  it('lets a waiting delivery go at once when its limit is removed', async () => {
    const rates = limits([0, 1], [0, 1]);
    expect(rates.tryTake(D, 1)).toBe(true);
    let done = false;
    const waiting = rates.take(D, 1).then(() => (done = true));
    await jest.advanceTimersByTimeAsync(10);
    expect(rates.tryTake(D, null)).toBe(true);
    await jest.advanceTimersByTimeAsync(250);
    await waiting;
    expect(done).toBe(true);
  });
});
