import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

import { CounterTally, HistogramSeries, LightHistogram, Metrics } from '@app/observability';

import type { AttemptResult } from './attempt-result';

/** A webhook request's outcome. */
type Outcome = AttemptResult['kind'];

/** Status classes by the hundreds digit of a status. */
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** The `status_class` label of a status; `none` without an answer. */
function statusClass(status: number | undefined): string {
  if (status === undefined) return 'none';
  return STATUS_CLASSES[Math.floor(status / 100)] ?? `${Math.floor(status / 100)}xx`;
}

/** What became of a delivery, as the deliveries counters label it. */
export type DeliveryResult = 'delivered' | 'retried' | 'dead' | 'discarded';

/** The dispatcher's own metrics. Labels are bounded sets: outcomes, status classes, reasons, tiers. */
@Injectable()
export class DispatcherMetrics {
  /** Webhook requests made, by outcome (success, retryable, permanent) and status class. */
  readonly attempts: Counter<'outcome' | 'status_class'>;
  /** Duration of one webhook request, by outcome. */
  readonly requestSeconds: LightHistogram<'outcome'>;
  /** Deliveries handled, by result: delivered, retried, dead, discarded. */
  readonly deliveries: Counter<'result'>;
  /** The same per destination (at most 20 a source): what the dashboard breaks down. */
  readonly destinationDeliveries: Counter<'destination_id' | 'result'>;
  /** Deliveries sent to a retry tier, by tier (its delay label). */
  readonly retries: Counter<'tier'>;
  /** Deliveries dead-lettered, by reason. */
  readonly deadLetters: Counter<'reason'>;
  /** Deliveries dropped because their destination was disabled or deleted, by reason. */
  readonly discarded: Counter<'reason'>;
  /** Webhook requests in flight now. */
  readonly requestsInFlight: Gauge;
  /** Calls waiting with no slot for their batch's answer or ledger outcome (`PendingCalls`). */
  readonly pendingCalls: Gauge;
  /** Where `pendingCalls` reads its value when scraped (the dispatch's `PendingCalls`). */
  pendingCallsNow: () => number = () => 0;
  /** From the router's produce (first attempt) or the first attempt (retries) to a 2xx. */
  readonly latencySeconds: LightHistogram<never>;
  /** Batch requests of batching destinations, by result (delivered, retried, dead, discarded). */
  readonly batches: Counter<'result'>;
  /** Calls that travelled in batch requests. */
  readonly batchedCalls: Counter;
  /** Attempts of ordered destinations' calls retried in place (not on a tier). */
  readonly orderingRetriesInPlace: Counter;
  /** Users' orderings suspended: a held call sent to a tier, by reason (ordering-decision.ts). */
  readonly orderingSuspended: Counter<'reason'>;

  private readonly pendingAttempts = new CounterTally<'outcome' | 'status_class'>();
  private readonly pendingDeliveries = new CounterTally<'result'>();
  /** Per destination, one tally per result keyed by the destination id: no key built per delivery. */
  private readonly pendingByDestination: Record<
    DeliveryResult,
    CounterTally<'destination_id' | 'result'>
  > = {
    delivered: new CounterTally(),
    retried: new CounterTally(),
    dead: new CounterTally(),
    discarded: new CounterTally(),
  };
  private inFlight = 0;
  /** `requestSeconds`'s series by outcome, resolved on first use (labels are not hashed per request). */
  private readonly requestSeries: Partial<Record<Outcome, HistogramSeries>> = {};
  private readonly latency: HistogramSeries;

  constructor(metrics: Metrics) {
    this.attempts = metrics.counter(
      'sluice_dispatcher_attempts_total',
      'Webhook requests made, by outcome and status class',
      ['outcome', 'status_class'],
      this.pendingAttempts,
    );
    this.requestSeconds = metrics.lightHistogram(
      'sluice_dispatcher_request_duration_seconds',
      'Duration of one webhook request',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    this.deliveries = metrics.counter(
      'sluice_dispatcher_deliveries_total',
      'Deliveries handled, by result',
      ['result'],
      this.pendingDeliveries,
    );
    this.destinationDeliveries = metrics.counter(
      'sluice_dispatcher_destination_deliveries_total',
      'Deliveries handled, by destination and result',
      ['destination_id', 'result'],
      ...Object.values(this.pendingByDestination),
    );
    this.retries = metrics.counter(
      'sluice_dispatcher_retries_scheduled_total',
      'Deliveries sent to a retry tier, by tier',
      ['tier'],
    );
    this.deadLetters = metrics.counter(
      'sluice_dispatcher_dead_letters_total',
      'Deliveries dead-lettered, by reason',
      ['reason'],
    );
    this.discarded = metrics.counter(
      'sluice_dispatcher_deliveries_discarded_total',
      'Deliveries dropped because their destination was disabled or deleted',
      ['reason'],
    );
    this.requestsInFlight = metrics.scrapedGauge(
      'sluice_dispatcher_requests_in_flight',
      'Webhook requests in flight',
      () => this.inFlight,
    );
    this.pendingCalls = metrics.scrapedGauge(
      'sluice_dispatcher_pending_calls',
      'Calls waiting, with no slot, for their batch request or ledger outcome',
      () => this.pendingCallsNow(),
    );
    this.latencySeconds = metrics.lightHistogram(
      'sluice_dispatcher_delivery_latency_seconds',
      'Time from a delivery being produced (or first attempted, for retries) to its 2xx',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 14400],
    );
    this.latency = this.latencySeconds.series();
    this.batches = metrics.counter(
      'sluice_dispatcher_batches_total',
      "Batch requests of batching destinations, by their first call's result",
      ['result'],
    );
    this.batchedCalls = metrics.counter(
      'sluice_dispatcher_batched_calls_total',
      'Calls that travelled in batch requests',
    );
    this.orderingRetriesInPlace = metrics.counter(
      'sluice_dispatcher_ordering_retries_in_place_total',
      "Ordered destinations' calls retried in place after a failed attempt",
    );
    this.orderingSuspended = metrics.counter(
      'sluice_dispatcher_ordering_suspended_total',
      "Users' orderings suspended: a held call sent to a retry tier, by reason",
      ['reason'],
    );
  }

  /** A webhook request starts. */
  requestStarted(): void {
    this.inFlight += 1;
  }

  /** A webhook request ended after `seconds` with this outcome and status (none without one). */
  requestEnded(outcome: Outcome, status: number | undefined, seconds: number): void {
    this.inFlight -= 1;
    (this.requestSeries[outcome] ??= this.requestSeconds.series({ outcome })).observe(seconds);
    const statusLabel = statusClass(status);
    this.pendingAttempts.add(`${outcome} ${statusLabel}`, () => ({
      outcome,
      status_class: statusLabel,
    }));
  }

  /** A delivery was delivered `seconds` after it was produced (or first attempted). */
  delivered(seconds: number): void {
    this.latency.observe(seconds);
  }

  /** `n` deliveries were handled, with this result (and their destination, when they name one). */
  delivery(result: DeliveryResult, destinationId?: string, n = 1): void {
    this.pendingDeliveries.add(result, () => ({ result }), n);
    if (destinationId === undefined) return;
    this.pendingByDestination[result].add(
      destinationId,
      () => ({ destination_id: destinationId, result }),
      n,
    );
  }
}
