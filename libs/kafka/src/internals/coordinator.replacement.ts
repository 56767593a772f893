/**
 * Wraps kafkajs's offset manager and consumer group so that commits and heartbeats follow the
 * group's coordinator when it moves to another broker (its broker crashed, or leadership of
 * the group's `__consumer_offsets` partition moved back after it returned). kafkajs 2.2.4
 * keeps the broker it joined through: when that broker dies, a commit looks the same node id up
 * again ("Broker 1 not found in the cached metadata") and after `NOT_COORDINATOR` it refreshes
 * metadata but sends to the old broker again, so every commit fails until the member happens
 * to join again; the partitions then start over from the last commit that got through, and
 * whatever was finished since is handled a second time. The wrappers ask the cluster for the
 * group's coordinator instead (a FindCoordinator request) whenever the one they hold is
 * disconnected or said it is not the coordinator.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of a kafkajs broker this reads. */
export interface CoordinatorBroker {
  isConnected(): boolean;
}

/** The parts of kafkajs's cluster this calls. */
export interface CoordinatorCluster {
  findGroupCoordinator(args: { groupId: string }): Promise<CoordinatorBroker>;
}

/** The parts of kafkajs's `OffsetManager` this wraps or reads. */
export interface OffsetManagerInternals {
  cluster: CoordinatorCluster;
  groupId: string;
  coordinator: CoordinatorBroker;
  getCoordinator: (this: OffsetManagerInternals) => Promise<CoordinatorBroker>;
  commitOffsets: (this: OffsetManagerInternals, offsets?: unknown) => Promise<void>;
}

/** The parts of kafkajs's `ConsumerGroup` this wraps or reads. */
export interface HeartbeatInternals {
  cluster: CoordinatorCluster;
  groupId: string;
  coordinator: CoordinatorBroker;
  heartbeat: (this: HeartbeatInternals, options: { interval: number }) => Promise<void>;
}

/** Error types (kafkajs's names of Kafka's codes) that say the coordinator is elsewhere. */
const MOVED_TYPES = new Set([
  'NOT_COORDINATOR_FOR_GROUP' /* 16: another broker is the coordinator now */,
  'GROUP_COORDINATOR_NOT_AVAILABLE' /* 15: the coordinator is loading or gone */,
]);
/** kafkajs errors that say the broker held cannot be reached (or is gone from metadata). */
const UNREACHABLE_NAMES = new Set(['KafkaJSConnectionError', 'KafkaJSBrokerNotFound']);

/** Whether an error from the coordinator means it should be looked up again. */
export function coordinatorMoved(error: unknown): boolean {
  const e = error as { type?: string; name?: string; originalError?: unknown } | undefined;
  if (e === undefined || e === null) return false;
  if (MOVED_TYPES.has(e.type ?? '') || UNREACHABLE_NAMES.has(e.name ?? '')) return true;
  // kafkajs's retrier wraps the last error it saw.
  return e.name === 'KafkaJSNumberOfRetriesExceeded' && coordinatorMoved(e.originalError);
}

/** Offset managers (per generation) and groups whose coordinator must be looked up again. */
const stale = new WeakSet<object>();

/** Wraps `getCoordinator` and `commitOffsets` of an `OffsetManager` prototype. */
export function wrapOffsetManager(prototype: OffsetManagerInternals): void {
  const commitOffsets = prototype.commitOffsets;
  prototype.getCoordinator = async function (this: OffsetManagerInternals) {
    if (stale.has(this) || !this.coordinator.isConnected()) {
      this.coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId });
      stale.delete(this);
    }
    return this.coordinator;
  };
  prototype.commitOffsets = async function (this: OffsetManagerInternals, offsets?: unknown) {
    try {
      await commitOffsets.call(this, offsets);
    } catch (error) {
      if (coordinatorMoved(error)) stale.add(this);
      throw error;
    }
  };
}

/**
 * Wraps `heartbeat` of a `ConsumerGroup` prototype: a heartbeat that cannot reach its
 * coordinator asks for the coordinator and beats once more there. The new coordinator answers
 * as the group's state there says (a rebalance, an unknown member), which kafkajs handles by
 * joining again; before, the heartbeat kept failing until the consumer crashed and restarted.
 */
export function wrapHeartbeat(prototype: HeartbeatInternals): void {
  const heartbeat = prototype.heartbeat;
  prototype.heartbeat = async function (this: HeartbeatInternals, options: { interval: number }) {
    if (stale.has(this)) {
      this.coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId });
      stale.delete(this);
    }
    try {
      await heartbeat.call(this, options);
    } catch (error) {
      // NOT_COORDINATOR is kafkajs's cue to join again (which finds the coordinator): keep it.
      const unreachable = UNREACHABLE_NAMES.has((error as { name?: string }).name ?? '');
      if (!unreachable) throw error;
      stale.add(this);
      this.coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId });
      stale.delete(this);
      await heartbeat.call(this, options);
    }
  };
}

let applied = false;

/**
 * Installs the wrappers once per process, before any consumer exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installCoordinatorReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('group coordinator', found);
  if (applied) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const offsets = require('kafkajs/src/consumer/offsetManager') as {
    prototype: OffsetManagerInternals;
  };
  const group = require('kafkajs/src/consumer/consumerGroup') as {
    prototype: HeartbeatInternals;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  wrapOffsetManager(offsets.prototype);
  wrapHeartbeat(group.prototype);
  applied = true;
}
