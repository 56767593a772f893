import { DurableLater, IncomingRecord } from '@app/kafka';
import type { BatchSettings } from '@app/settings';

import { BatchFormer, BatchTimers } from './batch-former';
import type { DeliveryFacts } from './delivery-record';

/** Where a delivery record was read from. */
export type QueuePath = 'main' | 'retry';

/** What a call's handler learns once its batch was answered and its effects produced. */
export interface BatchedOutcome<R> {
  readonly result: R;
  /** The wait for the call's ledger outcome, when one was gathered. */
  readonly ledger?: DurableLater;
}

/** One call in a batch, and how its handler learns what became of it. */
export interface BatchCall<R> {
  readonly record: IncomingRecord;
  readonly facts: DeliveryFacts;
  readonly body: Buffer;
  readonly path: QueuePath;
  settle(outcome: BatchedOutcome<R>): void;
  fail(error: unknown): void;
}

/**
 * Sends one formed batch of a destination: calls `started` once the batch holds one of its
 * destination's slots, and settles (or fails) every call of it. Never rejects.
 */
export type BatchSender<R> = (calls: BatchCall<R>[], started: () => void) => Promise<void>;

/** A call taken into a batch: its result, and the wait the handler answers with. */
export interface Queued<R> {
  readonly kind: 'queued';
  readonly result: Promise<R>;
  /** Resolves once the call's batch was answered and all it caused is durable. */
  readonly durable: DurableLater;
}

/**
 * Batched delivery's queue (docs/architecture.md, "Batched delivery"): calls of batching
 * destinations gather per destination and webhook subset (`BatchFormer`); each batch formed
 * goes to the sender at once, and waits there for its destination's slot. A call's handler
 * answers with its batch's wait (a DurableLater), so its pipeline slot is free while the batch
 * forms, and its offset is committed only once the batch was answered.
 *
 * A destination whose formed batches already wait for slots (`maxWaiting`) takes no more calls
 * at once: a main-topic call waits up to `waitMs` for room, then leaves for the first tier
 * (`busy`), as a single call does; a tier's call waits for room. So one slow destination
 * gathers at most `maxWaiting` batches beyond those in flight, and never holds the others up.
 */
export class BatchQueue<R> {
  private readonly former: BatchFormer<BatchCall<R>>;
  /** Formed batches waiting for a slot of their destination, by destination. */
  private readonly waiting = new Map<string, number>();
  private readonly roomWaiters = new Map<string, (() => void)[]>();
  /** Set by `close`: batches form without waiting, so a draining pipeline finishes soon. */
  private closing = false;

  constructor(
    private readonly sender: BatchSender<R>,
    private readonly maxWaiting: number,
    timers?: BatchTimers,
  ) {
    this.former = new BatchFormer((_key, calls) => this.formed(calls), timers);
  }

  /**
   * Adds a call to its batch, waiting first for room when its destination's batches are
   * backed up: up to `waitMs` on the main topic (then `busy`), for as long as it takes on a tier.
   */
  async add(
    call: Omit<BatchCall<R>, 'settle' | 'fail'>,
    bounds: BatchSettings,
    waitMs: number,
  ): Promise<Queued<R> | { readonly kind: 'busy' }> {
    const destinationId = call.facts.destinationId;
    const until = Date.now() + waitMs;
    while (!this.hasRoom(destinationId)) {
      const ms = call.path === 'main' ? Math.max(until - Date.now(), 0) : undefined;
      if (!(await this.room(destinationId, ms))) return { kind: 'busy' };
    }
    let settle!: (outcome: BatchedOutcome<R>) => void;
    let fail!: (error: unknown) => void;
    const settled = new Promise<BatchedOutcome<R>>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const ids = call.facts.webhookIds;
    const key = `${destinationId} ${ids === undefined ? '*' : ids.join(',')}`;
    const now = this.closing ? { ...bounds, maxWaitMs: 0 } : bounds;
    this.former.add(key, { ...call, settle, fail }, call.body.length, now);
    const result = settled.then((outcome) => outcome.result);
    // Handled here: the transport waits on `durable`, a direct caller on `result`.
    result.catch(() => undefined);
    const durable = new DurableLater(settled.then((outcome) => outcome.ledger?.durable));
    return { kind: 'queued', result, durable };
  }

  /** Calls in batches still forming. */
  get forming(): number {
    return this.former.size;
  }

  /**
   * Sends every batch still forming now, and from now on does not wait for batches to fill: a
   * closing dispatcher's pipelines drain without waiting out the batches' time.
   */
  close(): void {
    this.closing = true;
    this.former.flush();
  }

  private hasRoom(destinationId: string): boolean {
    return (this.waiting.get(destinationId) ?? 0) < this.maxWaiting;
  }

  /** Waits for room (at most `ms` when given); false when none came in time. */
  private room(destinationId: string, ms: number | undefined): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = this.roomWaiters.get(destinationId) ?? [];
      this.roomWaiters.set(destinationId, waiters);
      const timer =
        ms === undefined
          ? undefined
          : setTimeout(() => {
              const at = waiters.indexOf(wake);
              if (at >= 0) waiters.splice(at, 1);
              resolve(false);
            }, ms);
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      waiters.push(wake);
    });
  }

  private formed(calls: BatchCall<R>[]): void {
    const destinationId = calls[0].facts.destinationId;
    this.waiting.set(destinationId, (this.waiting.get(destinationId) ?? 0) + 1);
    let started = false;
    const start = (): void => {
      if (started) return;
      started = true;
      this.started(destinationId);
    };
    void this.sender(calls, start).finally(start);
  }

  /** A batch took a slot of its destination: room for one more batch to form. */
  private started(destinationId: string): void {
    const left = (this.waiting.get(destinationId) ?? 1) - 1;
    if (left > 0) this.waiting.set(destinationId, left);
    else this.waiting.delete(destinationId);
    const waiters = this.roomWaiters.get(destinationId);
    // Each wakes and looks again: the first ones may fill the room.
    if (waiters === undefined) return;
    this.roomWaiters.delete(destinationId);
    for (const wake of waiters) wake();
  }
}
