import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import { CounterTally } from './counter-tally';
import { LightHistogram } from './light-histogram';

/** How often the event-loop delay is sampled, in ms. */
const EVENT_LOOP_SAMPLE_MS = 100;

const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The project's package name, whose package.json gives the version. */
const PACKAGE_NAME = 'sluice';

/**
 * One Prometheus registry per app: default process metrics plus the app's own, all labelled
 * with `app`. Metric names carry units and `_total` suffixes; labels stay low-cardinality
 * (never a user id or a URL).
 */
export class Metrics {
  readonly registry = new Registry();

  /**
   * @param app the app's name, the `app` label of every metric
   * @param version the running version (`sluice_build_info`); package.json's by default
   */
  constructor(
    readonly app: string,
    version: string = packageVersion(__dirname),
  ) {
    this.registry.setDefaultLabels({ app });
    // Always 1: the labels are the information (joined to other series with `on (app)`).
    this.gauge('sluice_build_info', 'The running build of the app', ['version']).set(
      { version },
      1,
    );
    // The event-loop delay is sampled every 100 ms rather than prom-client's 10 ms: its timer
    // was an idle process's most frequent wake-up (about 100 a second).
    collectDefaultMetrics({
      register: this.registry,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    // Gauges whose names end in `_total`, which Prometheus reserves for counters
    // (`promtool check metrics` refuses them); their counts are not worth a rename.
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) this.registry.removeSingleMetric(name);
  }

  /** A counter; with tallies, their counts are added to it whenever it is read. */
  counter<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    ...tallies: CounterTally<L>[]
  ): Counter<L> {
    return new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(tallies.length > 0
        ? {
            collect(this: Counter<L>): void {
              for (const tally of tallies) tally.flush(this);
            },
          }
        : {}),
    });
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge without labels whose value `read` gives when it is scraped. */
  scrapedGauge(name: string, help: string, read: () => number): Gauge {
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      collect(this: Gauge): void {
        this.set(read());
      },
    });
  }

  histogram<L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ): Histogram<L> {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }

  /** A histogram for hot paths: observed through series resolved once ({@link LightHistogram}). */
  lightHistogram<L extends string>(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly L[] = [],
  ): LightHistogram<L> {
    const histogram = new LightHistogram(name, help, buckets, labelNames);
    this.registry.registerMetric(histogram as never);
    return histogram;
  }

  /** The registry in Prometheus text format. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * The version in the project's package.json, found from `dir` upwards (beside the sources in
 * a checkout, above dist/ in the image); `unknown` when there is none.
 */
export function packageVersion(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    const file = join(at, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') {
        return manifest.version;
      }
    }
    if (dirname(at) === at) return 'unknown';
  }
}
