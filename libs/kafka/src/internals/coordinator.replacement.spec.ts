import {
  type CoordinatorBroker,
  coordinatorMoved,
  type HeartbeatInternals,
  installCoordinatorReplacement,
  type OffsetManagerInternals,
  wrapHeartbeat,
  wrapOffsetManager,
} from './coordinator.replacement';
import { KafkajsVersionError } from './kafkajs-version';

/** A broker stand-in: connected or not, and what its requests answer. */
class FakeBroker implements CoordinatorBroker {
  requests = 0;

  constructor(
    readonly nodeId: number,
    public connected = true,
    public fails?: Error,
  ) {}

  isConnected(): boolean {
    return this.connected;
  }

  request(): Promise<void> {
    this.requests += 1;
    return this.fails ? Promise.reject(this.fails) : Promise.resolve();
  }
}

/** A cluster stand-in whose FindCoordinator answers `current`. */
class FakeCluster {
  lookups = 0;

  constructor(public current: FakeBroker) {}

  findGroupCoordinator(): Promise<FakeBroker> {
    this.lookups += 1;
    return Promise.resolve(this.current);
  }
}

function kafkaError(name: string, type?: string, originalError?: unknown): Error {
  return Object.assign(new Error(type ?? name), { name, type, originalError });
}

/** kafkajs's OffsetManager as far as the wrapper sees it: commits go to `getCoordinator()`. */
class FakeOffsets implements OffsetManagerInternals {
  readonly groupId = 'g';

  constructor(
    readonly cluster: FakeCluster,
    public coordinator: FakeBroker,
  ) {}

  getCoordinator(): Promise<CoordinatorBroker> {
    // kafkajs looks the same node id up again, which fails once it left the metadata.
    return Promise.resolve(this.coordinator);
  }

  async commitOffsets(): Promise<void> {
    const coordinator = (await this.getCoordinator()) as FakeBroker;
    await coordinator.request();
  }
}
wrapOffsetManager(FakeOffsets.prototype);

/** kafkajs's ConsumerGroup as far as the wrapper sees it: heartbeats go to `coordinator`. */
class FakeGroup implements HeartbeatInternals {
  readonly groupId = 'g';

  constructor(
    readonly cluster: FakeCluster,
    public coordinator: FakeBroker,
  ) {}

  heartbeat(): Promise<void> {
    return this.coordinator.request();
  }
}
wrapHeartbeat(FakeGroup.prototype);

describe(coordinatorMoved.name, () => {
  it.each([
    ['NOT_COORDINATOR', kafkaError('KafkaJSProtocolError', 'NOT_COORDINATOR_FOR_GROUP'), true],
    [
      'COORDINATOR_NOT_AVAILABLE',
      kafkaError('KafkaJSProtocolError', 'GROUP_COORDINATOR_NOT_AVAILABLE'),
      true,
    ],
    ['a refused connection', kafkaError('KafkaJSConnectionError'), true],
    ['a broker gone from metadata', kafkaError('KafkaJSBrokerNotFound'), true],
    [
      'retries over a broker gone',
      kafkaError('KafkaJSNumberOfRetriesExceeded', undefined, kafkaError('KafkaJSBrokerNotFound')),
      true,
    ],
    [
      'retries over a timeout',
      kafkaError(
        'KafkaJSNumberOfRetriesExceeded',
        undefined,
        kafkaError('KafkaJSRequestTimeoutError'),
      ),
      false,
    ],
    ['ILLEGAL_GENERATION', kafkaError('KafkaJSProtocolError', 'ILLEGAL_GENERATION'), false],
    ['a plain error', new Error('boom'), false],
    ['nothing', undefined, false],
  ])('%s: %s', (_, error, expected) => {
    expect(coordinatorMoved(error)).toBe(expected);
  });
});

describe(wrapOffsetManager.name, () => {
  it('commits to the coordinator the cluster names once the held one is disconnected', async () => {
    const dead = new FakeBroker(1, false);
    const alive = new FakeBroker(2);
    const offsets = new FakeOffsets(new FakeCluster(alive), dead);
    await expect(offsets.commitOffsets()).resolves.toBeUndefined();
    expect([dead.requests, alive.requests]).toEqual([0, 1]);
  });

  it('looks the coordinator up again after NOT_COORDINATOR, and commits there next time', async () => {
    const old = new FakeBroker(
      1,
      true,
      kafkaError('KafkaJSProtocolError', 'NOT_COORDINATOR_FOR_GROUP'),
    );
    const moved = new FakeBroker(3);
    const cluster = new FakeCluster(moved);
    const offsets = new FakeOffsets(cluster, old);
    await expect(offsets.commitOffsets()).rejects.toThrow('NOT_COORDINATOR_FOR_GROUP');
    await expect(offsets.commitOffsets()).resolves.toBeUndefined();
    expect([old.requests, moved.requests, cluster.lookups]).toEqual([1, 1, 1]);
  });

  it('keeps a connected coordinator that answered (no lookup per commit)', async () => {
    const broker = new FakeBroker(1);
    const cluster = new FakeCluster(broker);
    const offsets = new FakeOffsets(cluster, broker);
    await offsets.commitOffsets();
    await offsets.commitOffsets();
    expect([broker.requests, cluster.lookups]).toEqual([2, 0]);
  });

  it('keeps the coordinator after a failure that says nothing about it', async () => {
    const broker = new FakeBroker(
      1,
      true,
      kafkaError('KafkaJSProtocolError', 'ILLEGAL_GENERATION'),
    );
    const cluster = new FakeCluster(new FakeBroker(2));
    const offsets = new FakeOffsets(cluster, broker);
    await expect(offsets.commitOffsets()).rejects.toThrow('ILLEGAL_GENERATION');
    await expect(offsets.commitOffsets()).rejects.toThrow('ILLEGAL_GENERATION');
    expect(cluster.lookups).toBe(0);
  });
});

describe(wrapHeartbeat.name, () => {
  it('beats at the new coordinator when the held one cannot be reached', async () => {
    const dead = new FakeBroker(1, false, kafkaError('KafkaJSConnectionError'));
    const alive = new FakeBroker(2);
    const group = new FakeGroup(new FakeCluster(alive), dead);
    await expect(group.heartbeat()).resolves.toBeUndefined();
    expect(group.coordinator).toBe(alive);
    expect([dead.requests, alive.requests]).toEqual([1, 1]);
  });

  it('passes NOT_COORDINATOR on, for kafkajs to join again', async () => {
    const old = new FakeBroker(
      1,
      true,
      kafkaError('KafkaJSProtocolError', 'NOT_COORDINATOR_FOR_GROUP'),
    );
    const cluster = new FakeCluster(new FakeBroker(2));
    const group = new FakeGroup(cluster, old);
    await expect(group.heartbeat()).rejects.toThrow('NOT_COORDINATOR_FOR_GROUP');
    expect(cluster.lookups).toBe(0);
  });

  it('passes on what the new coordinator answers (a rebalance there)', async () => {
    const dead = new FakeBroker(1, false, kafkaError('KafkaJSConnectionError'));
    const rebalancing = new FakeBroker(
      2,
      true,
      kafkaError('KafkaJSProtocolError', 'REBALANCE_IN_PROGRESS'),
    );
    const group = new FakeGroup(new FakeCluster(rebalancing), dead);
    await expect(group.heartbeat()).rejects.toThrow('REBALANCE_IN_PROGRESS');
    expect(group.coordinator).toBe(rebalancing);
  });
});

describe(installCoordinatorReplacement.name, () => {
  it('refuses another kafkajs than the pinned one', () => {
    expect(() => installCoordinatorReplacement('2.3.0')).toThrow(KafkajsVersionError);
  });
});
