import { Metrics } from '@app/observability';

import { ConsumerLagExporter, LagSource, TopicLag, topicLag } from './consumer-lag';

describe(topicLag.name, () => {
  it('sums high watermark minus committed offset over partitions', () => {
    const ends = [
      { partition: 0, low: '0', high: '10' },
      { partition: 1, low: '0', high: '7' },
    ];
    const commits = [
      { partition: 0, offset: '4' },
      { partition: 1, offset: '7' },
    ];
    expect(topicLag(ends, commits)).toBe(6);
  });

  it('counts a partition without a commit from its log start', () => {
    const ends = [{ partition: 0, low: '3', high: '10' }];
    expect(topicLag(ends, [{ partition: 0, offset: '-1' }])).toBe(7);
    expect(topicLag(ends, [])).toBe(7);
  });

  it('counts from the log start when the commit fell below it (retention)', () => {
    expect(
      topicLag([{ partition: 0, low: '50', high: '60' }], [{ partition: 0, offset: '20' }]),
    ).toBe(10);
  });

  it('is zero for empty topics and fully committed ones', () => {
    expect(topicLag([{ partition: 0, low: '0', high: '0' }], [])).toBe(0);
    expect(topicLag([{ partition: 0, low: '0', high: '5' }], [{ partition: 0, offset: '5' }])).toBe(
      0,
    );
  });
});

describe(ConsumerLagExporter.name, () => {
  function fakeSource(read: () => Promise<TopicLag[]>): LagSource {
    return { connect: async () => {}, disconnect: async () => {}, read };
  }

  async function gaugeText(metrics: Metrics): Promise<string> {
    return (await metrics.text()).body
      .split('\n')
      .filter((line) => line.startsWith('sluice_consumer_lag_records{'))
      .join('\n');
  }

  it('sets the gauge per group and topic at start', async () => {
    const metrics = new Metrics('router');
    const exporter = new ConsumerLagExporter(
      fakeSource(async () => [{ groupId: 'sluice-router', topic: 'sluice.calls.v1', records: 42 }]),
      metrics,
      60_000,
    );
    await exporter.start();
    await exporter.stop();
    await expect(gaugeText(metrics)).resolves.toBe(
      'sluice_consumer_lag_records{group="sluice-router",topic="sluice.calls.v1",app="router"} 42',
    );
  });

  it('keeps the last values when a read fails, and never throws', async () => {
    const metrics = new Metrics('router');
    let fail = false;
    const exporter = new ConsumerLagExporter(
      fakeSource(async () => {
        if (fail) throw new Error('broker down');
        return [{ groupId: 'g', topic: 't', records: 3 }];
      }),
      metrics,
      60_000,
    );
    await exporter.start();
    fail = true;
    await expect(exporter.refresh()).resolves.toBeUndefined();
    await exporter.stop();
    await expect(gaugeText(metrics)).resolves.toContain('{group="g",topic="t",app="router"} 3');
  });
});
