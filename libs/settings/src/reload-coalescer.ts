/**
 * Runs an async task at most once at a time, with at most one more run queued behind it.
 *
 * A burst of requests while a run is in flight collapses into the single queued run, which
 * starts after the current one ends and so sees every change that prompted the burst. The
 * queued run keeps the reason of the first request that queued it.
 */
export class ReloadCoalescer<Reason> {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  /** `task` should not reject; if it does, the requests waiting on that run reject with it. */
  constructor(private readonly task: (reason: Reason) => Promise<void>) {}

  /** Resolves when a run that started at or after this call has finished. */
  request(reason: Reason): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return this.launch(reason);
    const next = (): Promise<void> => {
      this.queued = undefined;
      return this.launch(reason);
    };
    this.queued = this.running.then(next, next);
    return this.queued;
  }

  /** Resolves once nothing is running or queued (errors of the runs are ignored). */
  async idle(): Promise<void> {
    while (this.running || this.queued) {
      await (this.queued ?? this.running)?.catch(() => undefined);
    }
  }

  private launch(reason: Reason): Promise<void> {
    const run = Promise.resolve()
      .then(() => this.task(reason))
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.running = run;
    return run;
  }
}
