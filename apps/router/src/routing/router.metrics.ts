import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

import { CounterTally, HistogramSeries, LightHistogram, Metrics } from '@app/observability';

type ProduceOutcome = 'ok' | 'error';

/**
 * The router's own metrics. Labels: call type, filter or rejection reason (all bounded). What
 * every call counts goes through tallies and a light histogram: prom-client hashes the labels
 * of every `inc` and `observe`, a few microseconds a call on the router's hot path.
 */
@Injectable()
export class RouterMetrics {
  /** Calls that produced a delivery, by call type. */
  readonly routed: Counter<'type'>;
  /** Calls that produced no delivery, by reason and call type. */
  readonly filtered: Counter<'reason' | 'type'>;
  /**
   * Calls a destination did not take, by destination id and reason (its filter, or the
   * call's integrations object): one series per destination and reason, at most
   * MAX_DESTINATIONS_PER_SOURCE destinations per source; nothing is recorded per call.
   */
  readonly destinationSkipped: Counter<'destination_id' | 'reason'>;
  /** Delivery records acknowledged by Kafka, by call type. */
  readonly deliveries: Counter<'type'>;
  /** Records of the calls topic that could not be routed, by reason. */
  readonly rejected: Counter<'reason'>;
  /** Calls not routed because their (source, user, messageId) was seen within the window. */
  readonly deduplicated: Counter<'type'>;
  /** (source, user, messageId) fingerprints the de-duplication holds, over its partitions. */
  readonly dedupEntries: Gauge;
  /** Call records read back from Kafka to rebuild what a partition saw. */
  readonly dedupReadBack: Counter;
  /** Time from handing deliveries to the producer to the brokers' acknowledgement. */
  readonly produceSeconds: LightHistogram<'outcome'>;
  private readonly routedTally = new CounterTally<'type'>();
  private readonly filteredTally = new CounterTally<'reason' | 'type'>();
  private readonly deliveriesTally = new CounterTally<'type'>();
  /** Skips by destination id, one tally per reason: no key is built per call. */
  private readonly skippedTallies = {
    filter: new CounterTally<'destination_id' | 'reason'>(),
    integrations: new CounterTally<'destination_id' | 'reason'>(),
  };
  private readonly produceSeries: Record<ProduceOutcome, HistogramSeries>;

  constructor(metrics: Metrics) {
    this.routed = metrics.counter(
      'sluice_router_calls_routed_total',
      'Calls routed',
      ['type'],
      this.routedTally,
    );
    this.filtered = metrics.counter(
      'sluice_router_calls_filtered_total',
      'Calls that reached no destination',
      ['reason', 'type'],
      this.filteredTally,
    );
    this.destinationSkipped = metrics.counter(
      'sluice_router_destination_calls_skipped_total',
      "Calls a destination did not take: its filter dropped them, or the call's integrations object turned it off",
      ['destination_id', 'reason'],
      this.skippedTallies.filter,
      this.skippedTallies.integrations,
    );
    this.deliveries = metrics.counter(
      'sluice_router_deliveries_produced_total',
      'Deliveries produced (acknowledged by Kafka)',
      ['type'],
      this.deliveriesTally,
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
      '(source, user, messageId) fingerprints held for de-duplication',
    );
    this.dedupReadBack = metrics.counter(
      'sluice_router_dedup_read_back_records_total',
      'Call records read back from Kafka to rebuild the de-duplication after an assignment',
    );
    this.produceSeconds = metrics.lightHistogram(
      'sluice_router_produce_duration_seconds',
      'Kafka produce latency of deliveries, until acks=all',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    this.produceSeries = {
      ok: this.produceSeconds.series({ outcome: 'ok' }),
      error: this.produceSeconds.series({ outcome: 'error' }),
    };
  }

  /** A call routed to `deliveries` destinations, its deliveries acknowledged. */
  countRouted(type: string, deliveries: number): void {
    this.routedTally.add(type, () => ({ type }));
    this.deliveriesTally.add(type, () => ({ type }), deliveries);
  }

  /** A destination that did not take a call, for its filter or the integrations object. */
  countSkipped(destinationId: string, reason: string): void {
    if (reason !== 'filter' && reason !== 'integrations') return;
    this.skippedTallies[reason].add(destinationId, () => ({
      destination_id: destinationId,
      reason,
    }));
  }

  /** A call that reached no destination. */
  countFiltered(reason: string, type: string): void {
    this.filteredTally.add(`${reason}\u0000${type}`, () => ({ reason, type }));
  }

  /** A produce of deliveries, from the send to its answer. */
  observeProduce(outcome: ProduceOutcome, seconds: number): void {
    this.produceSeries[outcome].observe(seconds);
  }
}
