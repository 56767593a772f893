import { DurableLater, IncomingRecord } from '@app/kafka';
import type { BatchSettings } from '@app/settings';
import type { Span } from '@app/tracing';

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

/** One call in a batch. */
export interface BatchCall {
  readonly record: IncomingRecord;
  readonly facts: DeliveryFacts;
  readonly body: Buffer;
  readonly path: QueuePath;
  /** The call's attempt span, when traces are on. */
  readonly span?: Span;
}

/**
 * Sends one formed batch of a destination: calls `started` once the batch holds one of its
 * destination's slots, and answers each call's outcome, in the batch's order; rejects when
 * what the calls caused was not acknowledged (every call of the batch is then handled again).
 */
export type BatchSender<R> = (
  calls: BatchCall[],
  started: () => void,
) => Promise<readonly BatchedOutcome<R>[]>;

/** A call taken into a batch: the wait the handler answers with, and its result on demand. */
export interface Queued<R> {
  readonly kind: 'queued';
  /** Resolves once the call's batch was answered and all it caused is durable. */
  readonly durable: DurableLater;
  /** What became of the call, once `durable` resolved (made only when asked for). */
  readonly result: () => Promise<R>;
}

/**
 * What the calls of one batch share: one wait, which the transport's pipeline follows once
 * for all of them, and their outcomes once it settles.
 */
interface Shared<R> {
  readonly durable: DurableLater;
  resolve(): void;
  reject(error: unknown): void;
  outcomes: readonly BatchedOutcome<R>[];
  /** Calls taken so far: the next one's index. */
  size: number;
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
  private readonly former: BatchFormer<BatchCall, Shared<R>>;
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
    this.former = new BatchFormer<BatchCall, Shared<R>>(
      (_key, calls, shared) => this.formed(calls, shared),
      newShared,
      timers,
    );
  }

  /**
   * Adds a call to its batch, waiting first for room when its destination's batches are
   * backed up: up to `waitMs` on the main topic (then `busy`), for as long as it takes on a tier.
   */
  async add(
    call: BatchCall,
    bounds: BatchSettings,
    waitMs: number,
  ): Promise<Queued<R> | { readonly kind: 'busy' }> {
    const destinationId = call.facts.destinationId;
    if (!this.hasRoom(destinationId)) {
      const until = Date.now() + waitMs;
      while (!this.hasRoom(destinationId)) {
        const ms = call.path === 'main' ? Math.max(until - Date.now(), 0) : undefined;
        if (!(await this.room(destinationId, ms))) return { kind: 'busy' };
      }
    }
    const shared = this.take(call, bounds);
    const index = shared.size - 1;
    return {
      kind: 'queued',
      durable: shared.durable,
      result: () => shared.durable.durable.then(() => shared.outcomes[index].result),
    };
  }

  /**
   * Adds a call to its batch at once when its destination's batches have room, answering its
   * batch's wait (no promise of its own); undefined when they have none (then `add`).
   */
  join(call: BatchCall, bounds: BatchSettings): DurableLater | undefined {
    return this.hasRoom(call.facts.destinationId) ? this.take(call, bounds).durable : undefined;
  }

  /** Puts a call in its batch (which may form and go at once); answers the batch's context. */
  private take(call: BatchCall, bounds: BatchSettings): Shared<R> {
    const destinationId = call.facts.destinationId;
    const ids = call.facts.webhookIds;
    const key = ids === undefined ? destinationId : `${destinationId} ${ids.join(',')}`;
    const now = this.closing ? { ...bounds, maxWaitMs: 0 } : bounds;
    const shared = this.former.add(key, call, call.body.length, now);
    shared.size += 1;
    return shared;
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

  private formed(calls: BatchCall[], shared: Shared<R>): void {
    const destinationId = calls[0].facts.destinationId;
    this.waiting.set(destinationId, (this.waiting.get(destinationId) ?? 0) + 1);
    let started = false;
    const start = (): void => {
      if (started) return;
      started = true;
      this.started(destinationId);
    };
    void this.send(calls, shared, start).finally(start);
  }

  /** Sends a batch; its wait resolves once every call's ledger outcome is durable too. */
  private async send(calls: BatchCall[], shared: Shared<R>, start: () => void): Promise<void> {
    try {
      const outcomes = await this.sender(calls, start);
      shared.outcomes = outcomes;
      // The calls' outcomes mostly share one ledger record, so one wait.
      const ledgers = new Set<Promise<void>>();
      for (const outcome of outcomes) if (outcome.ledger) ledgers.add(outcome.ledger.durable);
      await Promise.all(ledgers);
      shared.resolve();
    } catch (error) {
      shared.reject(error);
    }
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

function newShared<R>(): Shared<R> {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const durable = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { durable: new DurableLater(durable), resolve, reject, outcomes: [], size: 0 };
}
