import type { Producer, ProducerBatch } from 'kafkajs';

import { BatchProducer } from './batch.producer';
import { KafkaConnection } from './kafka.connection';

/**
 * A kafkajs producer that records each request's records and acknowledges it at once, or
 * once `acknowledged` resolves.
 */
function fakeConnection(requests: string[][], acknowledged?: Promise<void>): KafkaConnection {
  const producer = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    sendBatch: async (batch: ProducerBatch) => {
      requests.push(
        (batch.topicMessages ?? []).flatMap((t) => t.messages.map((m) => String(m.value))),
      );
      await acknowledged;
      return [];
    },
  } as unknown as Producer;
  return { producer: () => producer, topic: (name: string) => name } as unknown as KafkaConnection;
}

const record = (value: string) => ({ topic: 't', value });

describe(BatchProducer.name, () => {
  it('gathers the sends of one tick into one request by default', async () => {
    const requests: string[][] = [];
    const producer = new BatchProducer(fakeConnection(requests));
    await producer.connect();
    await Promise.all([producer.send([record('a')]), producer.send([record('b')])]);
    await producer.send([record('c')]);
    expect(requests).toEqual([['a', 'b'], ['c']]);
  });

  it('with a linger, gathers sends made within it into one request', async () => {
    const requests: string[][] = [];
    const producer = new BatchProducer(fakeConnection(requests), { lingerMs: 40 });
    await producer.connect();
    const first = producer.send([record('a')]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = producer.send([record('b')]);
    // Nothing sent before the linger ends.
    expect(requests).toEqual([]);
    await Promise.all([first, second]);
    expect(requests).toEqual([['a', 'b']]);
  });

  it('with a linger, a send made during a request in flight waits for it too', async () => {
    const requests: string[][] = [];
    let acknowledge!: () => void;
    const acknowledged = new Promise<void>((resolve) => (acknowledge = resolve));
    const producer = new BatchProducer(fakeConnection(requests, acknowledged), { lingerMs: 100 });
    await producer.connect();
    const first = producer.send([record('a')]);
    while (requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = producer.send([record('b')]);
    acknowledge();
    await first;
    // 'b' is queued, its request not yet sent: a send 10 ms later joins it.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const third = producer.send([record('c')]);
    await Promise.all([second, third]);
    expect(requests).toEqual([['a'], ['b', 'c']]);
  });
});
