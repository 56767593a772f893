import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

import { breakerChangeJson, TOPIC } from '@app/contracts';
import { BatchProducer, OutgoingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';

import { BREAKER_STATE_VALUE, BreakerChange, BreakerStateName } from './circuit-breaker';

/**
 * How often a breaker that is not closed is published again: the admin app takes a replica
 * that has not done so for three of these as gone.
 */
export const BREAKER_REFRESH_MS = 30_000;

/** What the observer publishes with, and as which replica. */
export interface BreakerPublishing {
  readonly producer: Pick<BatchProducer, 'send'>;
  /** This process's name in the records (host name and process id). */
  readonly replica: string;
  readonly now: () => number;
}

/**
 * Makes the breakers' changes visible: a log line each (warn when one opens), a record each
 * on `sluice.breaker.changes.v1` for the admin API (and every `BREAKER_REFRESH_MS` again for
 * breakers not closed), the gauge
 * `sluice_dispatcher_breaker_state{destination_id}` (0 closed, 1 half-open, 2 open) and the
 * counter `sluice_dispatcher_breaker_transitions_total{destination_id,to}`. Destinations are a
 * bounded set (at most 20 per source), and only those whose breaker ever opened have a series.
 */
export class BreakerObserver implements OnApplicationShutdown {
  private readonly logger = new Logger('CircuitBreaker');
  private readonly states = new Map<string, BreakerStateName>();
  private readonly sinces = new Map<string, number>();
  private readonly transitions: Counter<'destination_id' | 'to'>;
  private readonly refresh?: NodeJS.Timeout;

  /**
   * @param inUse whether a destination still exists and is enabled: one deleted or disabled
   *   while its breaker was open gets no more attempts, so its breaker would never close; it
   *   is dropped from the gauge and the refreshes instead
   */
  constructor(
    metrics: Metrics,
    private readonly publishing?: BreakerPublishing,
    private readonly inUse: (destinationId: string) => boolean = () => true,
  ) {
    const states = this.states;
    const dropUnused = (): void => this.dropUnused();
    new Gauge({
      name: 'sluice_dispatcher_breaker_state',
      help: "A destination's circuit breaker in this process: 0 closed, 1 half-open, 2 open",
      labelNames: ['destination_id'],
      registers: [metrics.registry],
      collect() {
        dropUnused();
        this.reset();
        for (const [destinationId, state] of states) {
          this.set({ destination_id: destinationId }, BREAKER_STATE_VALUE[state]);
        }
      },
    });
    this.transitions = metrics.counter(
      'sluice_dispatcher_breaker_transitions_total',
      'Changes of a destination circuit breaker in this process, by the state entered',
      ['destination_id', 'to'],
    );
    if (publishing) {
      this.refresh = setInterval(() => this.publishOpen(), BREAKER_REFRESH_MS);
      this.refresh.unref();
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.refresh);
  }

  /** A breaker changed state. */
  changed(change: BreakerChange): void {
    const { destinationId, from, to, reason } = change;
    this.states.set(destinationId, to);
    // Since when it is not closed (open and half-open turns alike), or closed.
    if (from === 'closed' || to === 'closed') this.sinces.set(destinationId, change.at);
    this.publish([destinationId]);
    this.transitions.inc({ destination_id: destinationId, to });
    const line = `breaker of destination ${destinationId}: ${from} -> ${to} (${reason})`;
    if (to === 'open') this.logger.warn(line);
    else this.logger.log(line);
  }

  /** Publishes the breakers of every destination not closed, so readers see this replica live. */
  publishOpen(): void {
    this.dropUnused();
    const open = [...this.states].filter(([, state]) => state !== 'closed').map(([id]) => id);
    if (open.length > 0) this.publish(open);
  }

  /**
   * Off the delivery's path: a record that Kafka refuses is logged, not retried (the next
   * change or refresh says the same).
   */
  private publish(destinationIds: readonly string[]): void {
    if (!this.publishing) return;
    const { producer, replica, now } = this.publishing;
    const at = now();
    const records: OutgoingRecord[] = destinationIds.map((destinationId) => ({
      topic: TOPIC.breakerChanges,
      key: destinationId,
      value: breakerChangeJson({
        destinationId,
        replica,
        state: this.states.get(destinationId) ?? 'closed',
        since: this.sinces.get(destinationId) ?? at,
        at,
      }),
    }));
    producer.send(records).catch((error: unknown) => {
      this.logger.warn(`breaker states not published: ${(error as Error).message}`);
    });
  }

  private dropUnused(): void {
    for (const destinationId of this.states.keys()) {
      if (this.inUse(destinationId)) continue;
      this.states.delete(destinationId);
      this.sinces.delete(destinationId);
    }
  }

  /** The state each destination's breaker was last seen in. */
  state(destinationId: string): BreakerStateName {
    return this.states.get(destinationId) ?? 'closed';
  }
}
