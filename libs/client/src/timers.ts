/**
 * The library's timers. They never hold the process open on their own (`unref`), except
 * while someone awaits `flush()` or `close()`: then the backoff waits of the sends being
 * drained are `ref`ed, so that a program ending with `close()` is not cut off in the middle
 * of a retry.
 */
export class Timers {
  private holders = 0;
  private readonly waiting = new Set<NodeJS.Timeout>();

  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(timer);
        resolve();
      }, ms);
      if (this.holders === 0) timer.unref();
      this.waiting.add(timer);
    });
  }

  /** Runs `task` after `ms` unless cancelled; never holds the process open. */
  after(ms: number, task: () => void): NodeJS.Timeout {
    return setTimeout(task, ms).unref();
  }

  /** Holds the process open during sleeps until the returned function is called. */
  hold(): () => void {
    this.holders++;
    for (const timer of this.waiting) timer.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders--;
      if (this.holders === 0) for (const timer of this.waiting) timer.unref();
    };
  }
}
