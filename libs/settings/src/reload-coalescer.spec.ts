import { ReloadCoalescer } from './reload-coalescer';

/** A task whose runs finish only when the test says so. */
function controllableTask() {
  const runs: { reason: string; finish: () => void }[] = [];
  const task = (reason: string) =>
    new Promise<void>((resolve) => {
      runs.push({ reason, finish: resolve });
    });
  return { runs, task };
}

/** Lets pending promise callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
}

describe(ReloadCoalescer.name, () => {
  it('starts a run at once when idle', async () => {
    const { runs, task } = controllableTask();
    const done = new ReloadCoalescer(task).request('a');
    await flush();
    expect(runs.map((run) => run.reason)).toEqual(['a']);
    runs[0]?.finish();
    await expect(done).resolves.toBeUndefined();
  });

  it('collapses a burst during a run into one queued run', async () => {
    const { runs, task } = controllableTask();
    const coalescer = new ReloadCoalescer(task);
    const first = coalescer.request('first');
    const burst = ['b1', 'b2', 'b3'].map((reason) => coalescer.request(reason));
    await flush();
    expect(runs).toHaveLength(1);
    runs[0]?.finish();
    await first;
    await flush();
    expect(runs.map((run) => run.reason)).toEqual(['first', 'b1']);
    runs[1]?.finish();
    await expect(Promise.all(burst)).resolves.toHaveLength(3);
  });

  it('starts the queued run even when the current one fails', async () => {
    const reasons: string[] = [];
    const coalescer = new ReloadCoalescer((reason: string) => {
      reasons.push(reason);
      return reason === 'bad' ? Promise.reject(new Error('boom')) : Promise.resolve();
    });
    const bad = coalescer.request('bad');
    const good = coalescer.request('good');
    await expect(bad).rejects.toThrow('boom');
    await expect(good).resolves.toBeUndefined();
    expect(reasons).toEqual(['bad', 'good']);
  });

  it('becomes idle after running and queued runs finish', async () => {
    const { runs, task } = controllableTask();
    const coalescer = new ReloadCoalescer(task);
    void coalescer.request('a');
    void coalescer.request('b');
    let idle = false;
    const waiting = coalescer.idle().then(() => (idle = true));
    await flush();
    runs[0]?.finish();
    await flush();
    expect(idle).toBe(false);
    runs[1]?.finish();
    await waiting;
    expect(idle).toBe(true);
  });
});
