/** A counting semaphore: at most `size` holders; waiters are served in order. */
export class Semaphore {
  private inUse = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Takes a slot if one is free, without waiting. */
  tryAcquire(): boolean {
    if (this.inUse >= this.size) return false;
    this.inUse += 1;
    return true;
  }

  /** Takes a slot, waiting at most `ms` for one; false when none came in time. */
  acquireWithin(ms: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        resolve(false);
      }, ms);
      this.waiters.push(waiter);
    });
  }

  acquire(): Promise<void> {
    if (this.inUse < this.size) {
      this.inUse += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.inUse -= 1;
  }
}
