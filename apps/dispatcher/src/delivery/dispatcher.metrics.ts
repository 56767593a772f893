import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';

import { Metrics } from '@app/observability';

/** The dispatcher's own metrics. Labels are bounded sets: outcomes, status classes, reasons, tiers. */
@Injectable()
export class DispatcherMetrics {
  /** Webhook requests made, by outcome (success, retryable, permanent) and status class. */
  readonly attempts: Counter<'outcome' | 'status_class'>;
  /** Duration of one webhook request, by outcome. */
  readonly requestSeconds: Histogram<'outcome'>;
  /** Deliveries handled, by result: delivered, retried, dead, discarded. */
  readonly deliveries: Counter<'result'>;
  /** Deliveries sent to a retry tier, by tier (its delay label). */
  readonly retries: Counter<'tier'>;
  /** Deliveries dead-lettered, by reason. */
  readonly deadLetters: Counter<'reason'>;
  /** Deliveries dropped because their destination was disabled or deleted, by reason. */
  readonly discarded: Counter<'reason'>;
  /** Webhook requests in flight now. */
  readonly requestsInFlight: Gauge;
  /** From the router's produce (first attempt) or the first attempt (retries) to a 2xx. */
  readonly latencySeconds: Histogram;

  constructor(metrics: Metrics) {
    this.attempts = metrics.counter(
      'sluice_dispatcher_attempts_total',
      'Webhook requests made, by outcome and status class',
      ['outcome', 'status_class'],
    );
    this.requestSeconds = metrics.histogram(
      'sluice_dispatcher_request_duration_seconds',
      'Duration of one webhook request',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    this.deliveries = metrics.counter(
      'sluice_dispatcher_deliveries_total',
      'Deliveries handled, by result',
      ['result'],
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
    this.requestsInFlight = metrics.gauge(
      'sluice_dispatcher_requests_in_flight',
      'Webhook requests in flight',
    );
    this.latencySeconds = metrics.histogram(
      'sluice_dispatcher_delivery_latency_seconds',
      'Time from a delivery being produced (or first attempted, for retries) to its 2xx',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 14400],
    );
  }
}
