import { Injectable } from '@nestjs/common';
import { CounterTally, HistogramSeries, LightHistogram, Metrics } from '@app/observability';

/** Where a call came in. */
export type Channel = 'http' | 'kafka';

/**
 * Upper bounds of the request-duration buckets, in seconds: from half a millisecond (a call
 * refused before Kafka) to 2.5 s (a produce waiting on a slow broker).
 */
const REQUEST_SECONDS_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/**
 * Ingest's own metrics. Counts gather as plain numbers and reach prom-client when it is read,
 * and the histogram's series are resolved once: prom-client hashes the labels on every `inc`
 * or `observe`, several times per request otherwise.
 */
@Injectable()
export class IngestMetrics {
  /** Tracking-API requests by route and HTTP status. */
  private readonly requests = new CounterTally<'route' | 'status'>();
  /** Calls accepted (acknowledged by Kafka) by type and channel. */
  private readonly accepted = new CounterTally<'type' | 'channel'>();
  /** Calls or records refused, by reason code and channel. */
  private readonly rejected = new CounterTally<'reason' | 'channel'>();
  /** Time from handing records to the producer to the brokers' acknowledgement, by outcome. */
  private readonly produceOk: HistogramSeries;
  private readonly produceError: HistogramSeries;
  /** Tracking-API request durations by route and status class. */
  private readonly requestSeconds: LightHistogram<'route' | 'status_class'>;
  /** Their series by route, then by status / 100 (resolved on first use, then kept). */
  private readonly requestSeries = new Map<string, HistogramSeries[]>();

  constructor(metrics: Metrics) {
    // Registered with their tallies; read only by the registry.
    metrics.counter(
      'sluice_ingest_requests_total',
      'Tracking API requests',
      ['route', 'status'],
      this.requests,
    );
    metrics.counter(
      'sluice_ingest_calls_accepted_total',
      'Calls accepted',
      ['type', 'channel'],
      this.accepted,
    );
    metrics.counter(
      'sluice_ingest_calls_rejected_total',
      'Calls refused',
      ['reason', 'channel'],
      this.rejected,
    );
    const produceSeconds = metrics.lightHistogram(
      'sluice_ingest_produce_duration_seconds',
      'Kafka produce latency of accepted calls, until acks=all',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    this.produceOk = produceSeconds.series({ outcome: 'ok' });
    this.produceError = produceSeconds.series({ outcome: 'error' });
    this.requestSeconds = metrics.lightHistogram(
      'sluice_ingest_http_request_duration_seconds',
      'Tracking API request duration, from routing to the last byte of the answer',
      REQUEST_SECONDS_BUCKETS,
      ['route', 'status_class'],
    );
  }

  /**
   * A tracking-API request was answered with `status` after `seconds`. `route` is one of a
   * few names (`track`, `b`, `settings`...), never a path holding a write key.
   */
  request(route: string, status: number, seconds: number): void {
    this.requests.add(`${route} ${status}`, () => ({ route, status: String(status) }));
    const statusClass = Math.trunc(status / 100);
    let byClass = this.requestSeries.get(route);
    if (byClass === undefined) {
      byClass = [];
      this.requestSeries.set(route, byClass);
    }
    let series = byClass[statusClass];
    if (series === undefined) {
      series = this.requestSeconds.series({ route, status_class: `${statusClass}xx` });
      byClass[statusClass] = series;
    }
    series.observe(seconds);
  }

  /** `count` calls of a type were accepted. */
  callsAccepted(type: string, channel: Channel, count = 1): void {
    this.accepted.add(`${type} ${channel}`, () => ({ type, channel }), count);
  }

  /** A call or record was refused for `reason`. */
  callRejected(reason: string, channel: Channel): void {
    this.rejected.add(`${reason} ${channel}`, () => ({ reason, channel }));
  }

  /** A produce took `seconds` and ended with `outcome`. */
  produced(outcome: 'ok' | 'error', seconds: number): void {
    (outcome === 'ok' ? this.produceOk : this.produceError).observe(seconds);
  }
}
