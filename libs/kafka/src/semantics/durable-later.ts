/**
 * What a handler may answer when its work is done but not yet durable: its slot (and its
 * key's line) is freed at once, and its offset is committed only once `durable` resolves; a
 * rejection counts as the handler's failure. For effects worth batching over many records
 * (the dispatcher's ledger outcomes) that need not hold a record's slot while they gather.
 */
export class DurableLater {
  constructor(readonly durable: Promise<void>) {
    // Handled from here on: it may settle before the pipeline waits on it.
    durable.catch(() => undefined);
  }
}

/**
 * Records waiting for their effects to be durable. Consecutive records that wait on one promise
 * (the dispatcher's outcomes share one per record) share one reaction to it, not one each.
 */
export class DurableWaits<T> {
  /** The records waiting on the latest promise added, until it settles. */
  private latest: { readonly durable: Promise<void>; readonly tasks: T[] } | undefined;

  /** @param settled called once per promise with the records that waited on it */
  constructor(
    private readonly settled: (tasks: readonly T[], failed: boolean, error?: unknown) => void,
  ) {}

  /** `task` finishes (through `settled`) once `durable` settles. */
  add(task: T, durable: Promise<void>): void {
    const waiting = this.latest;
    if (waiting?.durable === durable) {
      waiting.tasks.push(task);
      return;
    }
    const tasks = [task];
    const wait = (this.latest = { durable, tasks });
    const settle = (failed: boolean, error?: unknown) => {
      if (this.latest === wait) this.latest = undefined;
      this.settled(tasks, failed, error);
    };
    durable.then(
      () => settle(false),
      (error: unknown) => settle(true, error),
    );
  }
}
