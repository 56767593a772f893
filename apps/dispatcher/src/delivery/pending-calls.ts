import { DurableLater } from '@app/kafka';

/**
 * Bounds the calls a dispatcher holds in memory with no slot: a call answered with a
 * `DurableLater` frees its partition's slot at once, and waits for its batch's answer and its
 * ledger outcome's acknowledgement with nothing else holding it back. Past `max` such calls, a
 * call is answered with its wait as a plain promise instead, which keeps its slot until then:
 * the partitions' slots fill and their fetching stops, so a ledger or a broker that falls
 * behind slows the dispatcher down instead of filling its memory.
 */
export class PendingCalls {
  private count = 0;
  /** Calls counted on each wait not yet settled (a batch's calls share one). */
  private readonly counts = new Map<DurableLater, number>();

  constructor(private readonly max: number) {}

  /** Calls waiting with no slot now. */
  get size(): number {
    return this.count;
  }

  /** A call's answer to its pipeline: `later` while under the bound, else its plain wait. */
  answer(later: DurableLater): DurableLater | Promise<undefined> {
    if (this.count >= this.max) return later.durable.then(() => undefined);
    this.count += 1;
    const counted = this.counts.get(later);
    if (counted !== undefined) {
      this.counts.set(later, counted + 1);
      return later;
    }
    this.counts.set(later, 1);
    const settle = (): void => {
      this.count -= this.counts.get(later) ?? 0;
      this.counts.delete(later);
    };
    later.durable.then(settle, settle);
    return later;
  }
}
