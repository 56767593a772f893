import { Semaphore } from '@app/kafka';

/**
 * Per-destination isolation: a bound on the deliveries in flight for each destination (its
 * failures are the circuit breaker's, `circuit-breaker.ts`). The main topic waits only briefly
 * for a destination at its bound: such deliveries leave for the first retry tier (where
 * attempts go on, waiting for slots) instead of holding a main-topic partition.
 */
export class DestinationGate {
  private readonly slots = new Map<string, Semaphore>();
  /** When each destination last took a free slot or finished a delivery (epoch ms). */
  private readonly progress = new Map<string, number>();

  constructor(private readonly perDestination: number) {}

  /** Takes one of the destination's slots if one is free, without waiting. */
  tryAcquire(destinationId: string, now: number): boolean {
    if (!this.slotsOf(destinationId).tryAcquire()) return false;
    this.progress.set(destinationId, now);
    return true;
  }

  /**
   * How long a destination at its bound (its last `tryAcquire` failed) has finished nothing:
   * since it last took a free slot or finished a delivery. A destination whose every slot
   * hangs frees none for a new delivery either, so waiting for one only holds the partition.
   */
  stalledMs(destinationId: string, now: number): number {
    const since = this.progress.get(destinationId);
    return since === undefined ? 0 : now - since;
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

  /** A delivery of the destination finished (progress, whatever its outcome). */
  release(destinationId: string, now: number): void {
    this.progress.set(destinationId, now);
    this.slots.get(destinationId)?.release();
  }
}
