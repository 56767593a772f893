import { Injectable, Logger } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

import { Metrics } from '@app/observability';

import { BREAKER_STATE_VALUE, BreakerChange, BreakerStateName } from './circuit-breaker';

/**
 * Makes the breakers' changes visible: a log line each (warn when one opens), the gauge
 * `sluice_dispatcher_breaker_state{destination_id}` (0 closed, 1 half-open, 2 open) and the
 * counter `sluice_dispatcher_breaker_transitions_total{destination_id,to}`. Destinations are a
 * bounded set (at most 20 per source), and only those whose breaker ever opened have a series.
 */
@Injectable()
export class BreakerObserver {
  private readonly logger = new Logger('CircuitBreaker');
  private readonly states = new Map<string, BreakerStateName>();
  private readonly transitions: Counter<'destination_id' | 'to'>;

  constructor(metrics: Metrics) {
    const states = this.states;
    new Gauge({
      name: 'sluice_dispatcher_breaker_state',
      help: "A destination's circuit breaker in this process: 0 closed, 1 half-open, 2 open",
      labelNames: ['destination_id'],
      registers: [metrics.registry],
      collect() {
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
  }

  /** A breaker changed state. */
  changed(change: BreakerChange): void {
    const { destinationId, from, to, reason } = change;
    this.states.set(destinationId, to);
    this.transitions.inc({ destination_id: destinationId, to });
    const line = `breaker of destination ${destinationId}: ${from} -> ${to} (${reason})`;
    if (to === 'open') this.logger.warn(line);
    else this.logger.log(line);
  }

  /** The state each destination's breaker was last seen in. */
  state(destinationId: string): BreakerStateName {
    return this.states.get(destinationId) ?? 'closed';
  }
}
