import { logLevel } from 'kafkajs';

import {
  COORDINATOR_ANSWERS,
  KafkaConnection,
  nestLevel,
  TRANSIENT_ANSWERS,
} from './kafka.connection';

/* eslint-disable @typescript-eslint/no-require-imports */
const { errorCodes } = require('kafkajs/src/protocol/error') as {
  errorCodes: { code: number; type: string; retriable: boolean; message: string }[];
};
/* eslint-enable @typescript-eslint/no-require-imports */

const OPTIONS = { clientId: 'spec', brokers: ['127.0.0.1:1'], topicPrefix: '' };

describe(nestLevel.name, () => {
  it("lists kafkajs's own messages for the topic, leader, coordinator and rebalance errors it retries or rejoins after", () => {
    // UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE, the three
    // group-coordinator codes, and REBALANCE_IN_PROGRESS (not retried: the member rejoins).
    const expected = errorCodes.filter((e) => [3, 5, 6, 14, 15, 16, 27].includes(e.code));
    expect(expected.filter((e) => !e.retriable).map((e) => e.code)).toEqual([27]);
    expect([...TRANSIENT_ANSWERS].sort()).toEqual(expected.map((e) => e.message).sort());
  });

  it('logs a transient error answer at debug, any other at its level', () => {
    const notLeader = 'This server is not the leader for that topic-partition';
    expect(
      nestLevel(
        'Connection',
        logLevel.ERROR,
        'Response ListOffsets(key: 2, version: 3)',
        notLeader,
      ),
    ).toBe('debug');
    expect(
      nestLevel(
        'Connection',
        logLevel.ERROR,
        'Response Produce(key: 0, version: 7)',
        'Broker: Message was too large',
      ),
    ).toBe('error');
    expect(nestLevel('Connection', logLevel.ERROR, 'Connection error', notLeader)).toBe('error');
    expect(
      nestLevel(
        'Producer',
        logLevel.WARN,
        'Limiting retries for the idempotent producer. Please ensure max.in.flight.requests.per.connection is set to 1',
      ),
    ).toBe('debug');
    expect(nestLevel('Consumer', logLevel.INFO, 'Consumer has joined the group')).toBe('debug');
    expect(nestLevel('Consumer', logLevel.WARN, 'Lagging')).toBe('warn');
  });

  it("lists kafkajs's coordinator answers, which it counts retriable (so a crashed consumer restarts)", () => {
    // GROUP_LOAD_IN_PROGRESS, GROUP_COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR_FOR_GROUP
    const coordinator = errorCodes.filter((e) => [14, 15, 16].includes(e.code));
    expect(coordinator.map((e) => e.retriable)).toEqual([true, true, true]);
    expect([...COORDINATOR_ANSWERS].sort()).toEqual(coordinator.map((e) => e.message).sort());
  });

  it("logs a consumer's crash on a coordinator answer, and every restart, as a warning", () => {
    const loading =
      "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group";
    expect(nestLevel('Consumer', logLevel.ERROR, loading)).toBe('warn');
    expect(
      nestLevel(
        'Consumer',
        logLevel.ERROR,
        'Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available',
      ),
    ).toBe('warn');
    expect(nestLevel('Consumer', logLevel.ERROR, 'Restarting the consumer in 328ms')).toBe('warn');
    // Any other crash stays an error, as does the same text outside a crash.
    expect(
      nestLevel(
        'Consumer',
        logLevel.ERROR,
        'Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator',
      ),
    ).toBe('error');
    expect(
      nestLevel(
        'Consumer',
        logLevel.ERROR,
        'Crash: KafkaJSProtocolError: This server does not host this topic-partition',
      ),
    ).toBe('error');
    expect(nestLevel('Consumer', logLevel.ERROR, 'Error when calling eachBatch', loading)).toBe(
      'error',
    );
  });
});

describe(KafkaConnection.name, () => {
  it('installs the kafkajs replacements, then refuses to start on another kafkajs version', () => {
    expect(() => new KafkaConnection(OPTIONS)).not.toThrow();
    jest.isolateModules(() => {
      jest.doMock('kafkajs/package.json', () => ({ version: '2.3.0' }));
      // A fresh copy of the lib, as a process that finds kafkajs 2.3.0 would load it.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const fresh = require('./kafka.connection') as { KafkaConnection: typeof KafkaConnection };
      const { KafkajsVersionError: FreshError } =
        require('./kafkajs-version') as typeof import('./kafkajs-version');
      /* eslint-enable @typescript-eslint/no-require-imports */
      expect(() => new fresh.KafkaConnection(OPTIONS)).toThrow(FreshError);
      expect(() => new fresh.KafkaConnection(OPTIONS)).toThrow(
        /written for kafkajs 2\.2\.4 but kafkajs 2\.3\.0 is installed/,
      );
    });
  });
});
