import { Semaphore } from '@app/kafka';

import { BreakerObserver } from './breaker-observer';
import { BreakerAdmission, BreakerPolicy, CircuitBreakers, Verdict } from './circuit-breaker';
import { DestinationGate } from './destination-gate';
import { DestinationRateLimits } from './rate-limits.service';

/**
 * What bounds the requests to destinations, shared by single and batched delivery: the
 * process-wide slots, each destination's slots, its circuit breaker and its rate limit.
 */
export class DeliveryCapacity {
  /** The process-wide bound on requests in flight. */
  readonly slots: Semaphore;
  /** Each destination's bound on requests in flight. */
  readonly gate: DestinationGate;
  private readonly breakers: CircuitBreakers;

  constructor(
    options: {
      readonly maxInFlight: number;
      readonly maxInFlightPerDestination: number;
      readonly breaker: BreakerPolicy;
    },
    private readonly observer: Pick<BreakerObserver, 'changed'>,
    readonly rateLimits: DestinationRateLimits,
    private readonly now: () => number,
  ) {
    this.slots = new Semaphore(options.maxInFlight);
    this.gate = new DestinationGate(options.maxInFlightPerDestination);
    this.breakers = new CircuitBreakers(options.breaker);
  }

  /** Whether the destination's breaker lets an attempt go out now (a probe when half-open). */
  admitBreaker(destinationId: string, now: number): BreakerAdmission {
    const { admission, change } = this.breakers.admit(destinationId, now);
    if (change) this.observer.changed(change);
    return admission;
  }

  /** Counts an attempt's verdict in its destination's breaker (a probe's place is freed). */
  settleProbe(destinationId: string, probe: boolean, verdict: Verdict = 'none'): void {
    if (!probe && verdict === 'none') return;
    const change = this.breakers.record(destinationId, verdict, probe, this.now());
    if (change) this.observer.changed(change);
  }
}
