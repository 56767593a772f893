import { Semaphore } from '@app/kafka';

/**
 * Per-destination isolation: a bound on the deliveries in flight for each destination, and a
 * count of its consecutive retryable failures. A destination with `failingAfter` of them in a
 * row is failing. The main topic never waits for a failing destination, and only briefly for
 * one at its bound: such deliveries leave for the first retry tier (where attempts go on,
 * waiting for slots) instead of holding a main-topic partition.
 */
export class DestinationGate {
  private readonly slots = new Map<string, Semaphore>();
  private readonly streaks = new Map<string, number>();

  constructor(
    private readonly perDestination: number,
    private readonly failingAfter: number,
  ) {}

  isFailing(destinationId: string): boolean {
    return (this.streaks.get(destinationId) ?? 0) >= this.failingAfter;
  }

  /** Takes one of the destination's slots if one is free, without waiting. */
  tryAcquire(destinationId: string): boolean {
    return this.slotsOf(destinationId).tryAcquire();
  }

  /** Waits for one of the destination's slots. */
  async acquire(destinationId: string): Promise<void> {
    await this.slotsOf(destinationId).acquire();
  }

  /** Takes one of the destination's slots, waiting at most `ms`; false when none came in time. */
  acquireWithin(destinationId: string, ms: number): Promise<boolean> {
    return this.slotsOf(destinationId).acquireWithin(ms);
  }

  private slotsOf(destinationId: string): Semaphore {
    let slots = this.slots.get(destinationId);
    if (!slots) {
      slots = new Semaphore(this.perDestination);
      this.slots.set(destinationId, slots);
    }
    return slots;
  }

  release(destinationId: string): void {
    this.slots.get(destinationId)?.release();
  }

  succeeded(destinationId: string): void {
    this.streaks.delete(destinationId);
  }

  failed(destinationId: string): void {
    this.streaks.set(destinationId, (this.streaks.get(destinationId) ?? 0) + 1);
  }
}
