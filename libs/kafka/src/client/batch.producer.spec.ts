import type { Producer, ProducerBatch } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { BatchProducer, producerIdLost } from './batch.producer';

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
    jest.useFakeTimers();
    try {
      const producer = new BatchProducer(fakeConnection(requests), { lingerMs: 40 });
      await producer.connect();
      const first = producer.send([record('a')]);
      await jest.advanceTimersByTimeAsync(10);
      const second = producer.send([record('b')]);
      await jest.advanceTimersByTimeAsync(29);
      // Nothing sent before the linger ends.
      expect(requests).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      await Promise.all([first, second]);
      expect(requests).toEqual([['a', 'b']]);
    } finally {
      jest.useRealTimers();
    }
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

/**
 * Producers that record each request as `<producer index>:<values>` and hold it until the
 * test acknowledges it (`acknowledge()` settles the oldest request still held).
 */
function heldProducers() {
  const requests: string[] = [];
  const held: (() => void)[] = [];
  const disconnected: number[] = [];
  let made = 0;
  const producer = () => {
    const index = (made += 1);
    return {
      connect: () => Promise.resolve(),
      disconnect: () => Promise.resolve(void disconnected.push(index)),
      sendBatch: (batch: ProducerBatch) => {
        const values = (batch.topicMessages ?? []).flatMap((t) =>
          t.messages.map((m) => String(m.value)),
        );
        requests.push(`${index}:${values.join(',')}`);
        return new Promise((resolve) => held.push(() => resolve([])));
      },
    } as unknown as Producer;
  };
  const connection = { producer, topic: (name: string) => name } as unknown as KafkaConnection;
  const settled = async (count: number) => {
    while (requests.length < count) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    connection,
    requests,
    disconnected,
    settled,
    acknowledge: () => held.shift()!(),
  };
}

describe(`${BatchProducer.name} with requests in flight`, () => {
  it('by default sends the next request only once the one in flight is acknowledged', async () => {
    const p = heldProducers();
    const producer = new BatchProducer(p.connection);
    await producer.connect();
    const first = producer.send([record('a')]);
    await p.settled(1);
    const second = producer.send([record('b')]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.requests).toEqual(['1:a']);
    p.acknowledge();
    await first;
    await p.settled(2);
    p.acknowledge();
    await second;
    expect(p.requests).toEqual(['1:a', '1:b']);
  });

  it('with two, a send made during a request goes out at once through the other producer', async () => {
    const p = heldProducers();
    const producer = new BatchProducer(p.connection, { requestsInFlight: 2 });
    await producer.connect();
    const a = producer.send([record('a')]);
    await p.settled(1);
    const b = producer.send([record('b')]);
    await p.settled(2);
    // Both producers busy: these wait, together, for the first one free.
    const c = producer.send([record('c')]);
    const d = producer.send([record('d')]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.requests).toEqual(['2:a', '1:b']);
    p.acknowledge();
    await a;
    await p.settled(3);
    expect(p.requests[2]).toBe('2:c,d');
    p.acknowledge();
    p.acknowledge();
    await Promise.all([b, c, d]);
  });

  it('on disconnect sends what is queued, then disconnects every producer', async () => {
    const p = heldProducers();
    const producer = new BatchProducer(p.connection, { requestsInFlight: 3 });
    await producer.connect();
    const sent = producer.send([record('a')]);
    const closed = producer.disconnect();
    await p.settled(1);
    expect(p.disconnected).toEqual([]);
    p.acknowledge();
    await Promise.all([sent, closed]);
    expect(p.disconnected.sort()).toEqual([1, 2, 3]);
    await expect(producer.send([record('b')])).rejects.toThrow('not connected');
  });

  it('refuses fewer than one request in flight', () => {
    expect(() => new BatchProducer(heldProducers().connection, { requestsInFlight: 0 })).toThrow(
      'at least one request',
    );
  });
});

describe('BatchProducer after the broker refused a producer id', () => {
  /** Producers numbered as made; the first refuses its first request as kafkajs reports it. */
  function refusingConnection(sent: string[], made: { count: number; disconnected: number[] }) {
    return {
      topic: (name: string) => name,
      producer: () => {
        const index = made.count++;
        let refused = false;
        return {
          connect: () => Promise.resolve(),
          disconnect: () => {
            made.disconnected.push(index);
            return Promise.resolve();
          },
          sendBatch: (batch: ProducerBatch) => {
            if (index === 0 && !refused) {
              refused = true;
              const error = Object.assign(new Error('out of order sequence number'), {
                type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
              });
              return Promise.reject(error);
            }
            for (const t of batch.topicMessages ?? [])
              for (const m of t.messages) sent.push(`${index}:${String(m.value)}`);
            return Promise.resolve([]);
          },
        } as unknown as Producer;
      },
    } as unknown as KafkaConnection;
  }

  it('fails that send and sends the next ones through a new producer', async () => {
    const sent: string[] = [];
    const made = { count: 0, disconnected: [] as number[] };
    const producer = new BatchProducer(refusingConnection(sent, made));
    await producer.connect();
    await expect(producer.send([record('a')])).rejects.toThrow('out of order');
    await producer.send([record('b')]);
    expect(sent).toEqual(['1:b']);
    expect(made).toEqual({ count: 2, disconnected: [0] });
  });

  it('tells the refusal of a producer id from other failures, however kafkajs wraps it', () => {
    expect(producerIdLost(new Error('connect ECONNREFUSED'))).toBe(false);
    expect(
      producerIdLost(Object.assign(new Error('x'), { type: 'NOT_LEADER_FOR_PARTITION' })),
    ).toBe(false);
    const refusal = Object.assign(new Error('x'), { type: 'UNKNOWN_PRODUCER_ID' });
    expect(producerIdLost(refusal)).toBe(true);
    expect(producerIdLost(Object.assign(new Error('retries'), { originalError: refusal }))).toBe(
      true,
    );
  });
});

describe(`${BatchProducer.name} lingering`, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('ends a linger early once lingerRecords are queued', async () => {
    const requests: string[][] = [];
    const producer = new BatchProducer(fakeConnection(requests), {
      lingerMs: 1_000,
      lingerRecords: 3,
    });
    await producer.connect();
    const a = producer.send([record('a')]);
    await jest.advanceTimersByTimeAsync(10);
    const b = producer.send([record('b')]);
    await jest.advanceTimersByTimeAsync(10);
    expect(requests).toEqual([]);
    const c = producer.send([record('c')]);
    await jest.advanceTimersByTimeAsync(0);
    await Promise.all([a, b, c]);
    expect(requests).toEqual([['a', 'b', 'c']]);
  });

  it('with two in flight, a send during a linger joins it, one during a request lingers anew', async () => {
    const p = heldProducers();
    const producer = new BatchProducer(p.connection, { requestsInFlight: 2, lingerMs: 20 });
    await producer.connect();
    const a = producer.send([record('a')]);
    await jest.advanceTimersByTimeAsync(5);
    const b = producer.send([record('b')]);
    await jest.advanceTimersByTimeAsync(15);
    await p.settled(1);
    expect(p.requests).toEqual(['2:a,b']);
    // With the first request in flight, a send starts the second producer's linger.
    const c = producer.send([record('c')]);
    await jest.advanceTimersByTimeAsync(20);
    await p.settled(2);
    expect(p.requests).toEqual(['2:a,b', '1:c']);
    p.acknowledge();
    p.acknowledge();
    await Promise.all([a, b, c]);
  });
});
