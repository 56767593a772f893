import { INestApplication } from '@nestjs/common';

import { KafkaConnection } from '../internals/kafka.connection';
import {
  ConsumerDeclaration,
  connectConsumers,
  consumerProblem,
  defineKafkaTopology,
  KafkaTopologyError,
  lagGroups,
  transportOptions,
} from './kafka-topology';
import { KafkaTransport } from './kafka.transport';

class CallsConsumer {
  readonly registered: string[][] = [];
  register(_transport: KafkaTransport, topics: readonly string[]): void {
    this.registered.push([...topics]);
  }
}

const TUNING = { partitionsConcurrently: 2, maxInFlightPerPartition: 8, failureBackoffMs: 1_000 };

function declared(overrides: Partial<ConsumerDeclaration> = {}): ConsumerDeclaration {
  return {
    group: 'sluice-router',
    topics: ['sluice.calls.v1'],
    handler: CallsConsumer,
    tuning: TUNING,
    reportLag: true,
    ...overrides,
  };
}

describe(defineKafkaTopology.name, () => {
  it('puts the deployment prefix in front of every group', () => {
    const topology = defineKafkaTopology({
      prefix: 'prod.',
      consumers: { main: declared(), retries: declared({ group: 'sluice-router-retry' }) },
    });
    expect(topology.consumers.main.groupId).toBe('prod.sluice-router');
    expect(topology.consumers.retries.groupId).toBe('prod.sluice-router-retry');
    expect(topology.extraTopics).toEqual([]);
    expect(topology.producer).toEqual({});
  });

  it('refuses two consumers of one group', () => {
    expect(() =>
      defineKafkaTopology({ prefix: '', consumers: { a: declared(), b: declared() } }),
    ).toThrow(new KafkaTopologyError('consumer b: group sluice-router is declared twice'));
  });

  it('names the consumer whose declaration is wrong', () => {
    expect(() =>
      defineKafkaTopology({ prefix: '', consumers: { calls: declared({ topics: [] }) } }),
    ).toThrow('consumer calls: it reads no topic');
  });
});

describe(consumerProblem.name, () => {
  it.each<[string, Partial<ConsumerDeclaration>, string | undefined]>([
    ['a sound declaration', {}, undefined],
    ['a group without a name', { group: '' }, 'its group has no name'],
    ['no topic', { topics: [] }, 'it reads no topic'],
    ['a topic twice', { topics: ['a', 'a'] }, 'it names a topic twice'],
    [
      'no partition at a time',
      { tuning: { ...TUNING, partitionsConcurrently: 0 } },
      'partitionsConcurrently must be a whole number of at least 1',
    ],
    [
      'a fraction of a record in flight',
      { tuning: { ...TUNING, maxInFlightPerPartition: 1.5 } },
      'maxInFlightPerPartition must be a whole number of at least 1',
    ],
    [
      'a negative back-off',
      { tuning: { ...TUNING, failureBackoffMs: -1 } },
      'failureBackoffMs must be 0 or more',
    ],
  ])('%s', (_case, overrides, problem) => {
    expect(consumerProblem(declared(overrides))).toBe(problem);
  });
});

describe(lagGroups.name, () => {
  it('lists the groups that report their lag, with their topics', () => {
    const topology = defineKafkaTopology({
      prefix: 'p.',
      consumers: {
        receipts: declared({ group: 'sluice-admin', reportLag: false }),
        ledger: declared({ group: 'sluice-ledger', topics: ['a', 'b'] }),
      },
    });
    expect(lagGroups(topology)).toEqual([{ groupId: 'p.sluice-ledger', topics: ['a', 'b'] }]);
  });
});

describe(transportOptions.name, () => {
  it('adds the group, its topics and its tuning to what every transport shares', () => {
    const connection = {} as KafkaConnection;
    const { consumers } = defineKafkaTopology({
      prefix: 'p.',
      consumers: { tier: declared({ tuning: { ...TUNING, dueAtHeader: 'due' } }) },
    });
    expect(transportOptions(consumers.tier, { connection, sessionTimeoutMs: 6_000 })).toEqual({
      connection,
      sessionTimeoutMs: 6_000,
      groupId: 'p.sluice-router',
      topics: ['sluice.calls.v1'],
      ...TUNING,
      dueAtHeader: 'due',
    });
  });
});

describe(connectConsumers.name, () => {
  it('has each consumer class register its topics on a transport of its own, connected', () => {
    const consumer = new CallsConsumer();
    const strategies: unknown[] = [];
    const app = {
      get: () => consumer,
      connectMicroservice: ({ strategy }: { strategy: unknown }) => strategies.push(strategy),
    } as unknown as INestApplication;
    const topology = defineKafkaTopology({
      prefix: '',
      consumers: { main: declared(), retries: declared({ group: 'r', topics: ['t1', 't2'] }) },
    });
    const transports = connectConsumers(app, topology, { connection: {} as KafkaConnection });
    expect(consumer.registered).toEqual([['sluice.calls.v1'], ['t1', 't2']]);
    expect(strategies).toEqual([transports.main, transports.retries]);
    expect(transports.retries.consumerStatus().groupId).toBe('r');
  });
});
