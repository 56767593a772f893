import type { EachBatchPayload } from 'kafkajs';

import { MemoryCluster } from './memory-cluster';

/** A cluster with topic `t` of two partitions, closed after each test. */
let cluster: MemoryCluster;
beforeEach(async () => {
  jest.useFakeTimers();
  cluster = MemoryCluster.open(`spec-${Math.random().toString(16).slice(2)}`);
  await cluster.admin().createTopics({ topics: [{ topic: 't', numPartitions: 2 }] });
});
afterEach(() => {
  cluster.close();
  jest.useRealTimers();
});

/** Sends `values` to partition 0 of `t`. */
async function produce(...values: string[]): Promise<void> {
  await cluster.producer().sendBatch({
    topicMessages: [{ topic: 't', messages: values.map((value) => ({ value, partition: 0 })) }],
  });
}

/** Lets the consumer's loop run (on fake time) until `check` holds, for a few loops at most. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 20 && !check(); i += 1) await jest.advanceTimersByTimeAsync(100);
  expect(check()).toBe(true);
}

describe(MemoryCluster.name, () => {
  it('is selected only by a memory:// broker list, and only once opened', () => {
    expect(MemoryCluster.selectedBy(['127.0.0.1:9092'])).toBeUndefined();
    expect(MemoryCluster.selectedBy([`memory://${cluster.name}:0`])).toBe(cluster);
    expect(() => MemoryCluster.selectedBy(['memory://nobody:0'])).toThrow(
      'no memory cluster nobody is open in this process',
    );
  });

  it('acknowledges a record with the partition it went to, and counts it in the offsets', async () => {
    const producer = cluster.producer();
    const [sent] = await producer.sendBatch({
      topicMessages: [{ topic: 't', messages: [{ key: 'user-1', value: 'v' }] }],
    });
    const offsets = await cluster.admin().fetchTopicOffsets('t');
    expect(offsets.find((o) => o.partition === sent.partition)?.high).toBe('1');
  });

  it('hands records over from the committed offset on, and on from the last one resolved', async () => {
    await produce('a', 'b', 'c');
    cluster.commit('g', [{ topic: 't', partition: 0, offset: '1' }]);
    const seen: string[] = [];
    const consumer = cluster.consumer({ groupId: 'g' });
    await consumer.subscribe({ topics: ['t'], fromBeginning: true });
    await consumer.run({
      eachBatch: (payload: EachBatchPayload) => {
        const { batch } = payload;
        for (const m of batch.messages) seen.push(`${m.offset}:${m.value?.toString()}`);
        payload.resolveOffset(batch.messages[batch.messages.length - 1].offset);
        return Promise.resolve();
      },
    });
    await until(() => seen.length === 2);
    await produce('d');
    await until(() => seen.length === 3);
    await consumer.disconnect();
    expect(seen).toEqual(['1:b', '2:c', '3:d']);
  });

  it('skips a paused partition until resumed, and fetches again from a seek', async () => {
    await produce('a', 'b');
    const seen: string[] = [];
    const consumer = cluster.consumer({ groupId: 'g' });
    await consumer.subscribe({ topics: ['t'], fromBeginning: true });
    consumer.pause([{ topic: 't', partitions: [0] }]);
    expect(consumer.paused()).toEqual([{ topic: 't', partitions: [0] }]);
    await consumer.run({
      eachBatch: (payload: EachBatchPayload) => {
        const { batch } = payload;
        for (const m of batch.messages) seen.push(m.offset);
        payload.resolveOffset(batch.messages[batch.messages.length - 1].offset);
        return Promise.resolve();
      },
    });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual([]);
    consumer.resume([{ topic: 't' }]);
    await until(() => seen.length === 2);
    consumer.seek({ topic: 't', partition: 0, offset: '1' });
    await until(() => seen.length === 3);
    await consumer.disconnect();
    expect(seen).toEqual(['0', '1', '1']);
  });

  it('stores and answers a group’s committed offsets', async () => {
    const consumer = cluster.consumer({ groupId: 'g' });
    await consumer.commitOffsets([{ topic: 't', partition: 1, offset: '7' }]);
    await expect(cluster.admin().fetchOffsets({ groupId: 'g', topics: ['t'] })).resolves.toEqual([
      {
        topic: 't',
        partitions: [
          { partition: 0, offset: '-1', metadata: null },
          { partition: 1, offset: '7', metadata: null },
        ],
      },
    ]);
  });
});
