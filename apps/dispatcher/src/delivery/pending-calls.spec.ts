import { DurableLater } from '@app/kafka';

import { PendingCalls } from './pending-calls';

/** A wait that settles when told. */
function wait(): { later: DurableLater; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const durable = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { later: new DurableLater(durable), resolve, reject };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe(PendingCalls.name, () => {
  it('answers the wait itself up to its bound, then a plain promise of it', async () => {
    const pending = new PendingCalls(3);
    const batch = wait();
    const single = wait();
    expect(pending.answer(batch.later)).toBe(batch.later);
    expect(pending.answer(batch.later)).toBe(batch.later);
    expect(pending.answer(single.later)).toBe(single.later);
    expect(pending.size).toBe(3);
    const over = pending.answer(batch.later);
    expect(over).toBeInstanceOf(Promise);
    let done = false;
    void (over as Promise<undefined>).then(() => (done = true));
    await settled();
    expect(done).toBe(false);
    // The calls that share a wait are counted off together when it settles.
    batch.resolve();
    await settled();
    expect(done).toBe(true);
    expect(pending.size).toBe(1);
    expect(pending.answer(wait().later)).toBeInstanceOf(DurableLater);
  });

  it('counts off the calls of a failed wait, and a plain answer fails with it', async () => {
    const pending = new PendingCalls(1);
    const failing = wait();
    void pending.answer(failing.later);
    const over = pending.answer(failing.later) as Promise<undefined>;
    failing.reject(new Error('not acknowledged'));
    await expect(over).rejects.toThrow('not acknowledged');
    expect(pending.size).toBe(0);
  });
});
