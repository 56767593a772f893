import { Metrics } from '@app/observability';

import { IngestMetrics } from './ingest.metrics';

const NAME = 'sluice_ingest_http_request_duration_seconds';

/** The value of the exposition line of `metric` with exactly these labels (`app` aside). */
function sample(body: string, metric: string, labels: Record<string, string>): number | undefined {
  const wanted = JSON.stringify(
    { ...labels, app: 'ingest' },
    Object.keys(labels).concat('app').sort(),
  );
  for (const line of body.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== metric) continue;
    const own = Object.fromEntries(
      [...match[2].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (JSON.stringify(own, Object.keys(own).sort()) === wanted) return Number(match[3]);
  }
  return undefined;
}

describe(IngestMetrics.name, () => {
  it('times requests by route and status class, in buckets from 0.5 ms to 2.5 s', async () => {
    const metrics = new Metrics('ingest', '0.0.0');
    const ingest = new IngestMetrics(metrics);
    ingest.request('track', 200, 0.0004);
    ingest.request('track', 200, 0.003);
    ingest.request('track', 400, 0.0007);
    ingest.request('track', 401, 0.02);
    ingest.request('batch', 503, 3);
    ingest.request('settings', 304, 0.0001);
    const { body } = await metrics.text();
    expect(body).toContain(`# TYPE ${NAME} histogram`);
    const track2 = { route: 'track', status_class: '2xx' };
    expect(sample(body, `${NAME}_bucket`, { ...track2, le: '0.0005' })).toBe(1);
    expect(sample(body, `${NAME}_bucket`, { ...track2, le: '0.0025' })).toBe(1);
    expect(sample(body, `${NAME}_bucket`, { ...track2, le: '0.005' })).toBe(2);
    expect(sample(body, `${NAME}_bucket`, { ...track2, le: '2.5' })).toBe(2);
    expect(sample(body, `${NAME}_sum`, track2)).toBeCloseTo(0.0034, 10);
    expect(sample(body, `${NAME}_count`, track2)).toBe(2);
    // 400 and 401 share the 4xx series.
    const track4 = { route: 'track', status_class: '4xx' };
    expect(sample(body, `${NAME}_bucket`, { ...track4, le: '0.001' })).toBe(1);
    expect(sample(body, `${NAME}_count`, track4)).toBe(2);
    // Past the last bucket: only +Inf holds it.
    const batch5 = { route: 'batch', status_class: '5xx' };
    expect(sample(body, `${NAME}_bucket`, { ...batch5, le: '2.5' })).toBe(0);
    expect(sample(body, `${NAME}_bucket`, { ...batch5, le: '+Inf' })).toBe(1);
    expect(sample(body, `${NAME}_count`, { route: 'settings', status_class: '3xx' })).toBe(1);
    const bounds = [...body.matchAll(new RegExp(`^${NAME}_bucket\\{.*le="([^"]+)"`, 'gm'))];
    expect([...new Set(bounds.map((m) => m[1]))]).toEqual([
      '0.0005',
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '+Inf',
    ]);
  });

  it('still counts requests by route and status', async () => {
    const metrics = new Metrics('ingest', '0.0.0');
    const ingest = new IngestMetrics(metrics);
    ingest.request('track', 200, 0.001);
    ingest.request('track', 200, 0.001);
    const { body } = await metrics.text();
    const labels = { route: 'track', status: '200' };
    expect(sample(body, 'sluice_ingest_requests_total', labels)).toBe(2);
  });
});
