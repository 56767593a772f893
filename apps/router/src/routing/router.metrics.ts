import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';

import { Metrics } from '@app/observability';

/** The router's own metrics. Labels: call type, filter or rejection reason (all bounded). */
@Injectable()
export class RouterMetrics {
  /** Calls that produced a delivery, by call type. */
  readonly routed: Counter<'type'>;
  /** Calls that produced no delivery, by reason and call type. */
  readonly filtered: Counter<'reason' | 'type'>;
  /** Delivery records acknowledged by Kafka, by call type. */
  readonly deliveries: Counter<'type'>;
  /** Records of the calls topic that could not be routed, by reason. */
  readonly rejected: Counter<'reason'>;
  /** Calls not routed because their (source, messageId) was seen within the window. */
  readonly deduplicated: Counter<'type'>;
  /** (source, messageId) fingerprints the de-duplication holds, over its partitions. */
  readonly dedupEntries: Gauge;
  /** Call records read back from Kafka to rebuild what a partition saw. */
  readonly dedupReadBack: Counter;
  /** Time from handing deliveries to the producer to the brokers' acknowledgement. */
  readonly produceSeconds: Histogram<'outcome'>;

  constructor(metrics: Metrics) {
    this.routed = metrics.counter('sluice_router_calls_routed_total', 'Calls routed', ['type']);
    this.filtered = metrics.counter(
      'sluice_router_calls_filtered_total',
      'Calls that reached no destination',
      ['reason', 'type'],
    );
    this.deliveries = metrics.counter(
      'sluice_router_deliveries_produced_total',
      'Deliveries produced (acknowledged by Kafka)',
      ['type'],
    );
    this.rejected = metrics.counter(
      'sluice_router_records_rejected_total',
      'Call records that could not be routed, sent to the rejected topic',
      ['reason'],
    );
    this.deduplicated = metrics.counter(
      'sluice_router_calls_deduplicated_total',
      'Calls dropped as duplicates: their messageId was seen for the source within the window',
      ['type'],
    );
    this.dedupEntries = metrics.gauge(
      'sluice_router_dedup_entries',
      '(source, messageId) fingerprints held for de-duplication',
    );
    this.dedupReadBack = metrics.counter(
      'sluice_router_dedup_read_back_records_total',
      'Call records read back from Kafka to rebuild the de-duplication after an assignment',
    );
    this.produceSeconds = metrics.histogram(
      'sluice_router_produce_duration_seconds',
      'Kafka produce latency of deliveries, until acks=all',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
  }
}
