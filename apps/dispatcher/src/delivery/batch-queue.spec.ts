import type { IncomingRecord } from '@app/kafka';

import { BatchCall, BatchedOutcome, BatchQueue, QueuePath } from './batch-queue';
import type { DeliveryFacts } from './delivery-record';

const BOUNDS = { maxCalls: 2, maxBytes: 1_000_000, maxWaitMs: 60_000 };

/** A call of destination `d` to add. */
function call(destinationId: string, path: QueuePath = 'main') {
  return {
    record: {} as IncomingRecord,
    facts: { destinationId, webhookIds: undefined } as unknown as DeliveryFacts,
    body: Buffer.from('{}'),
    path,
  };
}

/** A sender that holds each batch until the test lets it take its slot and settle. */
class HeldSender {
  readonly batches: { calls: BatchCall[]; go: () => void }[] = [];

  send = (calls: BatchCall[], started: () => void): Promise<BatchedOutcome<string>[]> =>
    new Promise((resolve) => {
      this.batches.push({
        calls,
        go: () => {
          started();
          resolve(calls.map((c) => ({ result: `delivered ${c.facts.destinationId}` })));
        },
      });
    });
}

describe(BatchQueue.name, () => {
  let sender: HeldSender;
  let queue: BatchQueue<string>;

  beforeEach(() => {
    sender = new HeldSender();
    queue = new BatchQueue(sender.send, 1);
  });

  afterEach(() => queue.close());

  it("answers each call's outcome, and one wait for the whole batch", async () => {
    const added = await Promise.all([
      queue.add(call('d'), BOUNDS, 0),
      queue.add(call('d'), BOUNDS, 0),
    ]);
    expect(sender.batches).toHaveLength(1);
    sender.batches[0].go();
    const [first, second] = added;
    if (first.kind !== 'queued' || second.kind !== 'queued') throw new Error('not queued');
    expect(first.durable).toBe(second.durable);
    await expect(first.durable.durable).resolves.toBeUndefined();
    await expect(second.result()).resolves.toBe('delivered d');
  });

  it('fails the wait of every call when the sender rejects', async () => {
    const failing = new BatchQueue<string>(() => Promise.reject(new Error('refused')), 1);
    const added = await failing.add(call('d'), { ...BOUNDS, maxCalls: 1 }, 0);
    if (added.kind !== 'queued') throw new Error('not queued');
    await expect(added.durable.durable).rejects.toThrow('refused');
    await expect(added.result()).rejects.toThrow('refused');
  });

  it('turns a main-topic call away once its destination is backed up past the wait', async () => {
    await queue.add(call('d'), BOUNDS, 0);
    await queue.add(call('d'), BOUNDS, 0);
    await expect(queue.add(call('d'), BOUNDS, 5)).resolves.toEqual({ kind: 'busy' });
  });

  it('lets a tier call wait for room, and never holds another destination up', async () => {
    await queue.add(call('d'), BOUNDS, 0);
    await queue.add(call('d'), BOUNDS, 0);
    const waiting = queue.add(call('d', 'retry'), BOUNDS, 0);
    await expect(queue.add(call('other'), BOUNDS, 0)).resolves.toMatchObject({ kind: 'queued' });
    let added = false;
    void waiting.then(() => (added = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(added).toBe(false);
    sender.batches[0].go();
    await expect(waiting).resolves.toMatchObject({ kind: 'queued' });
    expect(queue.forming).toBe(2);
  });

  it("joins a call at once while its destination has room, answering its batch's wait", async () => {
    const first = queue.join(call('d'), BOUNDS);
    expect(queue.join(call('d'), BOUNDS)).toBe(first);
    // One formed batch waits for a slot (the most here): no room until it takes one.
    expect(queue.join(call('d'), BOUNDS)).toBeUndefined();
    expect(queue.join(call('other'), BOUNDS)).toBeDefined();
    sender.batches[0].go();
    await expect(first!.durable).resolves.toBeUndefined();
    expect(queue.join(call('d'), BOUNDS)).toBeDefined();
  });

  it('sends what is forming at close, and later calls without waiting', async () => {
    await queue.add(call('d'), BOUNDS, 0);
    queue.close();
    expect(sender.batches).toHaveLength(1);
    await queue.add(call('e'), BOUNDS, 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sender.batches).toHaveLength(2);
  });
});
