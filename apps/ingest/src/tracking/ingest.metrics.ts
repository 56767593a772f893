import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';

import { Metrics } from '@app/observability';

/** Where a call came in. */
export type Channel = 'http' | 'kafka';

/** Ingest's own metrics. */
@Injectable()
export class IngestMetrics {
  /** Tracking-API requests by route and HTTP status. */
  readonly requests: Counter<'route' | 'status'>;
  /** Calls accepted (acknowledged by Kafka) by type and channel. */
  readonly accepted: Counter<'type' | 'channel'>;
  /** Calls or records refused, by reason code and channel. */
  readonly rejected: Counter<'reason' | 'channel'>;
  /** Time from handing records to the producer to the brokers' acknowledgement. */
  readonly produceSeconds: Histogram<'outcome'>;

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
  }
}
