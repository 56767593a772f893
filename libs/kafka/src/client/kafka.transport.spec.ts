import { Logger } from '@nestjs/common';
import type { ConsumerConfig, EachBatchPayload, KafkaMessage } from 'kafkajs';

import { KafkaConnection } from '../internals/kafka.connection';
import { ConsumerHealth } from '../semantics/consumer-health';
import { IncomingRecord } from '../semantics/records';
import { KafkaTransportOptions } from './kafka-transport.options';
import { KafkaTransport } from './kafka.transport';

const PREFIX = 'p.';

/** A kafkajs consumer as far as the transport uses it, recording what it is asked. */
class FakeConsumer {
  readonly events = {
    GROUP_JOIN: 'group-join',
    CRASH: 'crash',
    REBALANCING: 'rebalancing',
  } as const;
  readonly calls: string[] = [];
  readonly committed: { topic: string; partition: number; offset: string }[][] = [];
  readonly listeners = new Map<string, (event: unknown) => void>();
  subscribed?: { topics: string[]; fromBeginning: boolean };
  eachBatch?: (payload: EachBatchPayload) => Promise<void>;
  pausedNow: { topic: string; partitions: number[] }[] = [];

  constructor(readonly config: ConsumerConfig) {}

  on(event: string, listener: (event: unknown) => void): void {
    this.listeners.set(event, listener);
  }
  connect = (): Promise<void> => Promise.resolve();
  subscribe = (subscription: { topics: string[]; fromBeginning: boolean }): Promise<void> => {
    this.subscribed = subscription;
    return Promise.resolve();
  };
  run = (options: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> => {
    this.eachBatch = options.eachBatch;
    return Promise.resolve();
  };
  pause(topics: { topic: string; partitions?: number[] }[]): void {
    this.calls.push(
      `pause ${topics.map((t) => `${t.topic}[${t.partitions?.join(',') ?? '*'}]`).join(' ')}`,
    );
  }
  seek({ topic, partition, offset }: { topic: string; partition: number; offset: string }): void {
    this.calls.push(`seek ${topic}[${partition}]@${offset}`);
  }
  resume(topics: { topic: string; partitions?: number[] }[]): void {
    this.calls.push(
      `resume ${topics.map((t) => `${t.topic}[${t.partitions?.join(',') ?? '*'}]`).join(' ')}`,
    );
  }
  paused(): { topic: string; partitions: number[] }[] {
    return this.pausedNow;
  }
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void> {
    this.committed.push(offsets);
    return Promise.resolve();
  }
  disconnect = jest.fn(() => Promise.resolve());
}

/** A connection that makes fake consumers and maps names with {@link PREFIX}. */
function fakeConnection(): { connection: KafkaConnection; consumers: FakeConsumer[] } {
  const consumers: FakeConsumer[] = [];
  const connection = {
    consumer: (config: ConsumerConfig) => {
      const consumer = new FakeConsumer(config);
      consumers.push(consumer);
      return consumer;
    },
    topic: (name: string) => `${PREFIX}${name}`,
    logicalTopic: (name: string) =>
      name.startsWith(PREFIX) ? name.slice(PREFIX.length) : undefined,
  };
  return { connection: connection as unknown as KafkaConnection, consumers };
}

/** A fetched batch of one partition, as kafkajs hands it to `eachBatch`. */
function batchOf(
  topic: string,
  partition: number,
  messages: { offset: string; headers?: Record<string, Buffer> }[],
): EachBatchPayload & { resolved: string[] } {
  const resolved: string[] = [];
  const batch = {
    topic,
    partition,
    messages: messages.map((m): KafkaMessage => ({
      offset: m.offset,
      key: Buffer.from('k'),
      value: Buffer.from('v'),
      headers: m.headers ?? {},
      timestamp: '0',
      attributes: 0,
    })),
    offsetLag: () => '0',
  };
  return {
    batch,
    resolved,
    resolveOffset: (offset: string) => resolved.push(offset),
    isRunning: () => true,
    isStale: () => false,
  } as unknown as EachBatchPayload & { resolved: string[] };
}

/** Starts a transport on a fake connection; resolves once its consumer runs. */
async function started(
  options: Partial<KafkaTransportOptions>,
  handlers: Record<string, (record: IncomingRecord) => Promise<unknown>>,
  beforeListen: (transport: KafkaTransport) => void = () => undefined,
): Promise<{ transport: KafkaTransport; consumer: FakeConsumer }> {
  const { connection, consumers } = fakeConnection();
  const transport = new KafkaTransport({
    connection,
    groupId: 'g',
    partitionsConcurrently: 1,
    maxInFlightPerPartition: 4,
    failureBackoffMs: 1_000,
    ...options,
  });
  for (const [topic, handler] of Object.entries(handlers)) transport.consume(topic, handler);
  beforeListen(transport);
  let failure: unknown;
  await transport.listen((error) => (failure = error));
  expect(failure).toBeUndefined();
  await Promise.resolve();
  return { transport, consumer: consumers[0] };
}

describe(KafkaTransport.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('refuses to start when a topic it is to read has no handler', async () => {
    const { connection } = fakeConnection();
    const transport = new KafkaTransport({
      connection,
      groupId: 'g',
      topics: ['calls', 'other'],
      partitionsConcurrently: 1,
      maxInFlightPerPartition: 1,
      failureBackoffMs: 1_000,
    });
    transport.consume('calls', () => Promise.resolve());
    let failure: unknown;
    await transport.listen((error) => (failure = error));
    expect(failure).toEqual(new Error('KafkaTransport has no handler for other'));
  });

  it('subscribes to the prefixed topics as a consumer with the documented defaults', async () => {
    const { consumer } = await started({}, { calls: () => Promise.resolve() });
    expect(consumer.subscribed).toEqual({ topics: ['p.calls'], fromBeginning: true });
    expect(consumer.config).toMatchObject({
      groupId: 'g',
      sessionTimeout: 8_000,
      heartbeatInterval: 1_000,
      rebalanceTimeout: 30_000,
      maxWaitTimeInMs: 2_000,
      allowAutoTopicCreation: false,
    });
  });

  it('has kafkajs restart a crashed consumer only until it closes', async () => {
    const { transport, consumer } = await started({}, { calls: () => Promise.resolve() });
    const restart = consumer.config.retry?.restartOnFailure;
    await expect(restart?.(new Error('crash'))).resolves.toBe(true);
    await transport.close();
    await expect(restart?.(new Error('crash'))).resolves.toBe(false);
  });

  it('hands records over by logical topic and commits the finished prefix, gathered', async () => {
    const seen: string[] = [];
    const { consumer } = await started(
      {},
      {
        calls: (record) => {
          seen.push(`${record.topic}[${record.partition}]@${record.offset}`);
          return Promise.resolve();
        },
      },
    );
    const payload = batchOf('p.calls', 0, [{ offset: '5' }, { offset: '6' }]);
    await consumer.eachBatch?.(payload);
    expect(seen).toEqual(['calls[0]@5', 'calls[0]@6']);
    expect(payload.resolved).toEqual(['6']);
    await jest.advanceTimersByTimeAsync(199);
    expect(consumer.committed).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(consumer.committed).toHaveLength(1);
    // A partition has one commit on its way at a time; the next covers what finished meanwhile.
    await jest.advanceTimersByTimeAsync(200);
    expect(consumer.committed.at(-1)).toEqual([{ topic: 'p.calls', partition: 0, offset: '7' }]);
  });

  it('pauses a partition at a record not yet due and resumes it at its due time', async () => {
    const now = 10_000;
    const handled: string[] = [];
    const { consumer } = await started(
      { dueAtHeader: 'due', now: () => now },
      {
        tier: (record) => {
          handled.push(record.offset);
          return Promise.resolve();
        },
      },
    );
    const due = { due: Buffer.from(String(now + 3_000)) };
    await consumer.eachBatch?.(batchOf('p.tier', 1, [{ offset: '20', headers: due }]));
    expect(handled).toEqual([]);
    expect(consumer.calls).toEqual(['pause p.tier[1]', 'seek p.tier[1]@20']);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(consumer.calls).toEqual(['pause p.tier[1]', 'seek p.tier[1]@20', 'resume p.tier[1]']);
  });

  it('after a rebalance reports consuming and resumes whatever was paused', async () => {
    const health = new ConsumerHealth();
    const { consumer } = await started({ health }, { calls: () => Promise.resolve() });
    expect(health.statuses()).toEqual([{ groupId: 'g', state: 'joining' }]);
    consumer.pausedNow = [{ topic: 'p.calls', partitions: [0, 1] }];
    consumer.listeners.get(consumer.events.GROUP_JOIN)?.({});
    expect(health.notConsuming()).toEqual([]);
    expect(consumer.calls).toEqual(['resume p.calls[0,1]']);
  });

  it('tells its partitions by logical topic after a join, and none while rebalancing', async () => {
    const told: (Map<string, readonly number[]> | undefined)[] = [];
    const { consumer } = await started({}, { calls: () => Promise.resolve() }, (transport) =>
      transport.onAssignment((owned) =>
        told.push(owned === undefined ? undefined : new Map(owned)),
      ),
    );
    consumer.listeners.get(consumer.events.GROUP_JOIN)?.({
      payload: { memberAssignment: { 'p.calls': [0, 2], elsewhere: [1] } },
    });
    consumer.listeners.get(consumer.events.REBALANCING)?.({});
    expect(told).toEqual([new Map([['calls', [0, 2]]]), undefined]);
  });

  it('ignores a batch of a topic it does not read (another group of the app reads it)', async () => {
    const handler = jest.fn(() => Promise.resolve());
    const { consumer } = await started({ topics: ['calls'] }, { calls: handler, other: handler });
    await consumer.eachBatch?.(batchOf('p.other', 0, [{ offset: '1' }]));
    expect(handler).not.toHaveBeenCalled();
  });

  it('closes by letting records in flight finish, committing them, and leaving the group', async () => {
    let finish: () => void = () => undefined;
    const { transport, consumer } = await started(
      {},
      { calls: () => new Promise<void>((resolve) => (finish = resolve)) },
    );
    await consumer.eachBatch?.(batchOf('p.calls', 0, [{ offset: '3' }]));
    const closed = transport.close();
    await jest.advanceTimersByTimeAsync(100);
    expect(consumer.disconnect).not.toHaveBeenCalled();
    finish();
    await jest.advanceTimersByTimeAsync(200);
    await closed;
    expect(consumer.calls).toEqual(['pause p.calls[*]']);
    expect(consumer.committed).toEqual([[{ topic: 'p.calls', partition: 0, offset: '4' }]]);
    expect(consumer.disconnect).toHaveBeenCalledTimes(1);
    expect(transport.consumerStatus()).toEqual({ groupId: 'g', state: 'stopped' });
  });

  it('closes within its close timeout even when a record never finishes', async () => {
    const { transport, consumer } = await started(
      { closeTimeoutMs: 500 },
      { calls: () => new Promise<void>(() => undefined) },
    );
    await consumer.eachBatch?.(batchOf('p.calls', 0, [{ offset: '3' }]));
    const closed = transport.close();
    await jest.advanceTimersByTimeAsync(500);
    await expect(closed).resolves.toBeUndefined();
    expect(consumer.committed).toEqual([]);
    expect(consumer.disconnect).toHaveBeenCalledTimes(1);
  });

  describe('says in its log what holds its commits back', () => {
    let warnings: string[];
    beforeEach(() => {
      warnings = [];
      jest
        .spyOn(Logger.prototype, 'warn')
        .mockImplementation((message: unknown) => void warnings.push(String(message)));
    });
    afterEach(() => jest.restoreAllMocks());

    it('a record unfinished for a minute, once', async () => {
      const { consumer } = await started({}, { calls: () => new Promise<void>(() => undefined) });
      await consumer.eachBatch?.(batchOf('p.calls', 2, [{ offset: '7' }, { offset: '8' }]));
      await jest.advanceTimersByTimeAsync(60_000);
      expect(warnings).toEqual([]);
      await jest.advanceTimersByTimeAsync(10_000);
      await jest.advanceTimersByTimeAsync(120_000);
      expect(warnings).toEqual([
        "record p.calls[2]@7 of group g unfinished for 60 s: the partition's commits wait for it",
      ]);
    });

    it('commits refused for long: the first refusal, a line every 30 s with how long, and their return', async () => {
      const { consumer } = await started({}, { calls: () => Promise.resolve() });
      let refusing = true;
      const illegal = Object.assign(new Error('Specified group generation id is not valid'), {
        name: 'KafkaJSNonRetriableError',
        type: 'ILLEGAL_GENERATION',
      });
      consumer.commitOffsets = (offsets) => {
        consumer.committed.push(offsets);
        return refusing ? Promise.reject(illegal) : Promise.resolve();
      };
      await consumer.eachBatch?.(batchOf('p.calls', 0, [{ offset: '3' }]));
      // Refused at 0.2 s, then retried 1, 2, 4, 8, 16 and 30 s apart: 7 requests by 61.2 s.
      await jest.advanceTimersByTimeAsync(61_200);
      expect(consumer.committed).toHaveLength(7);
      refusing = false;
      await jest.advanceTimersByTimeAsync(30_000);
      expect(warnings).toEqual([
        'commits of group g refused (ILLEGAL_GENERATION: KafkaJSNonRetriableError: Specified group generation id is not valid) for p.calls[0]; retrying',
        'commits of group g refused for 31 s (6 requests; last ILLEGAL_GENERATION: KafkaJSNonRetriableError: Specified group generation id is not valid) for p.calls[0]; retrying',
        'commits of group g refused for 61 s (7 requests; last ILLEGAL_GENERATION: KafkaJSNonRetriableError: Specified group generation id is not valid) for p.calls[0]; retrying',
        'commits of group g go through again after 91 s (7 refused)',
      ]);
    });
  });
});
