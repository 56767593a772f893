import { Injectable } from '@nestjs/common';
import { Counter, Histogram, LabelValues } from 'prom-client';

import { Metrics } from '@app/observability';

/** Where a call came in. */
export type Channel = 'http' | 'kafka';

/**
 * Ingest's own metrics. Each label combination's series is looked up once and kept:
 * prom-client hashes the label object on every `inc`, about a microsecond each, several
 * times per request otherwise.
 */
@Injectable()
export class IngestMetrics {
  /** Tracking-API requests by route and HTTP status. */
  private readonly requests: Counter<'route' | 'status'>;
  /** Calls accepted (acknowledged by Kafka) by type and channel. */
  private readonly accepted: Counter<'type' | 'channel'>;
  /** Calls or records refused, by reason code and channel. */
  private readonly rejected: Counter<'reason' | 'channel'>;
  /** Time from handing records to the producer to the brokers' acknowledgement. */
  private readonly produceSeconds: Histogram<'outcome'>;
  private readonly produceOk: Histogram.Internal<'outcome'>;
  private readonly produceError: Histogram.Internal<'outcome'>;
  private readonly series = new Map<string, { inc(n?: number): void }>();

  constructor(metrics: Metrics) {
    this.requests = metrics.counter('sluice_ingest_requests_total', 'Tracking API requests', [
      'route',
      'status',
    ]);
    this.accepted = metrics.counter('sluice_ingest_calls_accepted_total', 'Calls accepted', [
      'type',
      'channel',
    ]);
    this.rejected = metrics.counter('sluice_ingest_calls_rejected_total', 'Calls refused', [
      'reason',
      'channel',
    ]);
    this.produceSeconds = metrics.histogram(
      'sluice_ingest_produce_duration_seconds',
      'Kafka produce latency of accepted calls, until acks=all',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    this.produceOk = this.produceSeconds.labels({ outcome: 'ok' });
    this.produceError = this.produceSeconds.labels({ outcome: 'error' });
  }

  /** A tracking-API request was answered with `status`. */
  request(route: string, status: number): void {
    this.count(this.requests, `request ${route} ${status}`, { route, status: String(status) });
  }

  /** `count` calls of a type were accepted. */
  callsAccepted(type: string, channel: Channel, count = 1): void {
    this.count(this.accepted, `accepted ${type} ${channel}`, { type, channel }, count);
  }

  /** A call or record was refused for `reason`. */
  callRejected(reason: string, channel: Channel): void {
    this.count(this.rejected, `rejected ${reason} ${channel}`, { reason, channel });
  }

  /** A produce took `seconds` and ended with `outcome`. */
  produced(outcome: 'ok' | 'error', seconds: number): void {
    (outcome === 'ok' ? this.produceOk : this.produceError).observe(seconds);
  }

  /** `key` names the metric and the label values: each series is looked up once. */
  private count<L extends string>(
    counter: Counter<L>,
    key: string,
    labels: LabelValues<L>,
    n = 1,
  ): void {
    let series = this.series.get(key);
    if (!series) this.series.set(key, (series = counter.labels(labels)));
    series.inc(n);
  }
}
