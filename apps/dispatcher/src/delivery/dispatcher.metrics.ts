import { Injectable } from '@nestjs/common';
import { Counter, Gauge, LabelValues } from 'prom-client';

import { Metrics } from '@app/observability';

import { HistogramSeries, LightHistogram } from './light-histogram';

/**
 * Counts kept as plain numbers on the hot path, by a key naming one set of label values, and
 * added to their counter when it is read (a scrape): prom-client hashes the labels on every
 * `inc`, which cost several microseconds per delivery.
 */
class PendingCounts<L extends string> {
  private readonly entries = new Map<string, { labels: LabelValues<L>; count: number }>();

  /** Adds one for `key`; `labels` makes its label values the first time the key is seen. */
  add(key: string, labels: () => LabelValues<L>): void {
    const entry = this.entries.get(key);
    if (entry) entry.count += 1;
    else this.entries.set(key, { labels: labels(), count: 1 });
  }

  /** Moves the counts into the counter. */
  flush(counter: Counter<L>): void {
    for (const entry of this.entries.values()) {
      if (entry.count === 0) continue;
      counter.inc(entry.labels, entry.count);
      entry.count = 0;
    }
  }
}

/** Status classes by the hundreds digit of a status. */
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** The `status_class` label of a status; `none` without an answer. */
function statusClass(status: number | undefined): string {
  if (status === undefined) return 'none';
  return STATUS_CLASSES[Math.floor(status / 100)] ?? `${Math.floor(status / 100)}xx`;
}

/** The dispatcher's own metrics. Labels are bounded sets: outcomes, status classes, reasons, tiers. */
@Injectable()
export class DispatcherMetrics {
  /** Webhook requests made, by outcome (success, retryable, permanent) and status class. */
  readonly attempts: Counter<'outcome' | 'status_class'>;
  /** Duration of one webhook request, by outcome. */
  readonly requestSeconds: LightHistogram<'outcome'>;
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
  readonly latencySeconds: LightHistogram<never>;

  private readonly pendingAttempts = new PendingCounts<'outcome' | 'status_class'>();
  private readonly pendingDeliveries = new PendingCounts<'result'>();
  private inFlight = 0;
  /** `requestSeconds` by outcome, resolved once. */
  private readonly requestSeries = new Map<string, HistogramSeries>();
  private readonly latency: HistogramSeries;

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    const pendingAttempts = this.pendingAttempts;
    this.attempts = new Counter({
      name: 'sluice_dispatcher_attempts_total',
      help: 'Webhook requests made, by outcome and status class',
      labelNames: ['outcome', 'status_class'],
      registers,
      collect() {
        pendingAttempts.flush(this);
      },
    });
    this.requestSeconds = new LightHistogram(
      'sluice_dispatcher_request_duration_seconds',
      'Duration of one webhook request',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['outcome'],
    );
    metrics.registry.registerMetric(this.requestSeconds as never);
    const pendingDeliveries = this.pendingDeliveries;
    this.deliveries = new Counter({
      name: 'sluice_dispatcher_deliveries_total',
      help: 'Deliveries handled, by result',
      labelNames: ['result'],
      registers,
      collect() {
        pendingDeliveries.flush(this);
      },
    });
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
    const inFlight = (): number => this.inFlight;
    this.requestsInFlight = new Gauge({
      name: 'sluice_dispatcher_requests_in_flight',
      help: 'Webhook requests in flight',
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.latencySeconds = new LightHistogram(
      'sluice_dispatcher_delivery_latency_seconds',
      'Time from a delivery being produced (or first attempted, for retries) to its 2xx',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 14400],
    );
    metrics.registry.registerMetric(this.latencySeconds as never);
    this.latency = this.latencySeconds.series();
  }

  /** A webhook request starts. */
  requestStarted(): void {
    this.inFlight += 1;
  }

  /** A webhook request ended after `seconds` with this outcome and status (none without one). */
  requestEnded(outcome: string, status: number | undefined, seconds: number): void {
    this.inFlight -= 1;
    let series = this.requestSeries.get(outcome);
    if (!series) {
      series = this.requestSeconds.series({ outcome });
      this.requestSeries.set(outcome, series);
    }
    series.observe(seconds);
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

  /** A delivery was handled, with this result. */
  delivery(result: string): void {
    this.pendingDeliveries.add(result, () => ({ result }));
  }
}
