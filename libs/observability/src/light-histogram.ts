import type { LabelValues, MetricValueWithName } from 'prom-client';

/** What prom-client's registry reads of a metric. */
export interface HistogramValues {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly values: MetricValueWithName<string>[];
  readonly aggregator: 'sum';
}

/** One series of a {@link LightHistogram}: the observations of one set of label values. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last one is `+Inf`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly upperBounds: readonly number[],
  ) {
    this.counts = new Float64Array(upperBounds.length + 1);
  }

  observe(value: number): void {
    let bucket = 0;
    while (bucket < this.upperBounds.length && value > this.upperBounds[bucket]) bucket += 1;
    this.counts[bucket] += 1;
    this.sum += value;
    this.count += 1;
  }
}

/**
 * A Prometheus histogram whose series are resolved once and observed with an array update,
 * registered in a prom-client registry (which reads it through `get`) and exposed exactly as
 * prom-client's own `Histogram` would be. prom-client validates and hashes the labels on every
 * observation, a cost the dispatcher paid twice per delivery.
 */
export class LightHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    private readonly labelNames: readonly L[] = [],
  ) {}

  /** The series of these label values (made on first use); keep it and observe into it. */
  series(labels: LabelValues<L> = {}): HistogramSeries {
    const values = this.labelNames.map((name) => String(labels[name] ?? ''));
    const key = values.join('\u0000');
    let series = this.all.get(key);
    if (!series) {
      const own: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (own[name] = values[i]));
      series = new HistogramSeries(own, this.upperBounds);
      this.all.set(key, series);
    }
    return series;
  }

  reset(): void {
    for (const series of this.all.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** The values as prom-client's registry reads them: cumulative buckets, sum, count. */
  get(): Promise<HistogramValues> {
    const values: MetricValueWithName<string>[] = [];
    for (const series of this.all.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, i) => {
        cumulative += series.counts[i];
        values.push(this.value('_bucket', { ...series.labels, le: bound }, cumulative));
      });
      cumulative += series.counts[this.upperBounds.length];
      values.push(this.value('_bucket', { ...series.labels, le: '+Inf' }, cumulative));
      values.push(this.value('_sum', series.labels, series.sum));
      values.push(this.value('_count', series.labels, series.count));
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    });
  }

  private value(
    suffix: string,
    labels: Record<string, string | number>,
    value: number,
  ): MetricValueWithName<string> {
    return { labels, value, metricName: `${this.name}${suffix}` };
  }
}
