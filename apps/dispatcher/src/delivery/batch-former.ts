import type { BatchSettings } from '@app/settings';

/** Sets and clears the timer that sends a batch once it waited long enough. */
export interface BatchTimers {
  set(callback: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

const NODE_TIMERS: BatchTimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** A batch still forming: its items, its body's size as a JSON array, and its context. */
interface Forming<T, C> {
  readonly items: T[];
  bytes: number;
  timer: unknown;
  readonly context: C;
}

/**
 * Forms batches per key (a destination and the webhooks its calls cover) within a batching
 * destination's bounds, and hands each one over (`ready`) as soon as it is full or its first
 * item has waited `maxWaitMs`. A batch's size counts its body as a JSON array of the items:
 * `[`, the items joined by `,`, `]`. An item that would push a batch over `maxBytes` sends the
 * batch first; an item larger than `maxBytes` on its own goes alone. Keys never wait for each
 * other: each has its own batch and timer. Each batch has a context (`newContext`), which its
 * items share and which goes with it.
 */
export class BatchFormer<T, C = undefined> {
  private readonly forming = new Map<string, Forming<T, C>>();

  constructor(
    private readonly ready: (key: string, items: T[], context: C) => void,
    private readonly newContext: () => C,
    private readonly timers: BatchTimers = NODE_TIMERS,
  ) {}

  /**
   * Adds an item of `bytes` to its key's batch, under the bounds the destination has now.
   * @returns the context of the batch it joined
   */
  add(key: string, item: T, bytes: number, bounds: BatchSettings): C {
    let batch = this.forming.get(key);
    if (batch !== undefined && batch.bytes + 1 + bytes > bounds.maxBytes) {
      this.send(key);
      batch = undefined;
    }
    if (batch === undefined) {
      batch = { items: [], bytes: 2, timer: undefined, context: this.newContext() };
      this.forming.set(key, batch);
      batch.timer = this.timers.set(() => this.send(key), bounds.maxWaitMs);
    }
    batch.bytes += (batch.items.length > 0 ? 1 : 0) + bytes;
    batch.items.push(item);
    if (batch.items.length >= bounds.maxCalls || batch.bytes >= bounds.maxBytes) this.send(key);
    return batch.context;
  }

  /** Items in batches still forming. */
  get size(): number {
    let size = 0;
    for (const batch of this.forming.values()) size += batch.items.length;
    return size;
  }

  /** Hands over every batch still forming at once (a closing dispatcher's). */
  flush(): void {
    for (const key of [...this.forming.keys()]) this.send(key);
  }

  private send(key: string): void {
    const batch = this.forming.get(key);
    if (batch === undefined) return;
    this.forming.delete(key);
    this.timers.clear(batch.timer);
    this.ready(key, batch.items, batch.context);
  }
}

const OPEN = 0x5b; // [
const COMMA = 0x2c; // ,
const CLOSE = 0x5d; // ]

/**
 * A batch request's body: the calls' exact bytes as one JSON array, in the batch's order,
 * copied once into a buffer of its size.
 */
export function batchBody(bodies: readonly Buffer[]): Buffer {
  let size = 1 + Math.max(bodies.length - 1, 0) + 1;
  for (const body of bodies) size += body.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = OPEN;
  let at = 1;
  for (let i = 0; i < bodies.length; i += 1) {
    if (i > 0) out[at++] = COMMA;
    at += bodies[i].copy(out, at);
  }
  out[at] = CLOSE;
  return out;
}
