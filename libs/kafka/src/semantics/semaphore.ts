/** A waiter: granted a slot (true) or given up on at its deadline (false). */
interface Waiter {
  readonly grant: (acquired: boolean) => void;
  /** Epoch ms; Infinity when it waits for as long as it takes. */
  readonly deadline: number;
}

/**
 * A counting semaphore: at most `size` holders; waiters are served in order. Waits with a
 * deadline share one timer, armed for the earliest deadline: a busy destination has hundreds
 * of deliveries waiting at once, and a timer each cost more than the wait itself.
 */
export class Semaphore {
  private inUse = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms). */
  private timerAt = Infinity;

  constructor(private readonly size: number) {}

  /** Slots free now. */
  get free(): number {
    return this.size - this.inUse;
  }

  /** Takes a slot if one is free, without waiting. */
  tryAcquire(): boolean {
    if (this.inUse >= this.size) return false;
    this.inUse += 1;
    return true;
  }

  /** Takes a slot, waiting at most `ms` for one; false when none came in time. */
  acquireWithin(ms: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    const deadline = Date.now() + ms;
    return new Promise((grant) => {
      this.waiters.push({ grant, deadline });
      if (deadline < this.timerAt) this.arm(deadline);
    });
  }

  acquire(): Promise<void> {
    if (this.inUse < this.size) {
      this.inUse += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiters.push({ grant: () => resolve(), deadline: Infinity }),
    );
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.grant(true);
    else this.inUse -= 1;
    // No waiter left: the deadline timer has nothing to give up on.
    if (this.waiters.length === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = Infinity;
    }
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()));
  }

  /** Gives up on the waiters past their deadline; the timer then waits for the next one. */
  private expire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    const expired: Waiter[] = [];
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.deadline <= now) {
        expired.push(waiter);
        return false;
      }
      if (waiter.deadline < next) next = waiter.deadline;
      return true;
    });
    if (next !== Infinity) this.arm(next);
    for (const waiter of expired) waiter.grant(false);
  }
}
