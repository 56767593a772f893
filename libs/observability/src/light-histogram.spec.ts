import { Histogram, Registry } from 'prom-client';

import { LightHistogram } from './light-histogram';

/** Exposition lines with their labels sorted, sorted: the order of either means nothing. */
function normalized(text: string): string[] {
  return text
    .split('\n')
    .map((line) =>
      line.replace(
        /\{([^}]*)\}/,
        (_all, labels: string) => `{${labels.split(',').sort().join(',')}}`,
      ),
    )
    .sort();
}

const BUCKETS = [0.005, 0.01, 0.1, 1, 5];
const VALUES = [0, 0.005, 0.0051, 0.07, 0.5, 1, 2, 5, 7.5, 30];

describe(LightHistogram.name, () => {
  it('exposes exactly what a prom-client Histogram exposes for the same observations', async () => {
    const theirs = new Registry();
    theirs.setDefaultLabels({ app: 'test' });
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'help text',
      buckets: BUCKETS,
      labelNames: ['outcome'],
      registers: [theirs],
    });
    const ours = new Registry();
    ours.setDefaultLabels({ app: 'test' });
    const light = new LightHistogram('h_seconds', 'help text', BUCKETS, ['outcome']);
    ours.registerMetric(light as never);
    const success = light.series({ outcome: 'success' });
    VALUES.forEach((value, i) => {
      const outcome = i % 3 === 0 ? 'retryable' : 'success';
      reference.observe({ outcome }, value);
      (outcome === 'success' ? success : light.series({ outcome })).observe(value);
    });
    expect(normalized(await ours.metrics())).toEqual(normalized(await theirs.metrics()));
  });

  it('keeps one series per set of label values', () => {
    const light = new LightHistogram('h', 'help', BUCKETS, ['outcome']);
    expect(light.series({ outcome: 'a' })).toBe(light.series({ outcome: 'a' }));
    expect(light.series({ outcome: 'a' })).not.toBe(light.series({ outcome: 'b' }));
  });

  it('works without labels and resets to zero', async () => {
    const light = new LightHistogram('h', 'help', BUCKETS);
    light.series().observe(0.2);
    light.reset();
    const { values } = await light.get();
    expect(values.every((v) => v.value === 0)).toBe(true);
  });
});
