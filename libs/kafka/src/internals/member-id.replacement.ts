/**
 * Wraps two methods of kafkajs's consumer group so that a consumer restarted after a crash
 * joins again under the member id it had. kafkajs 2.2.4 restarts a crashed consumer (after a
 * broker outage, say) with a new `ConsumerGroup` whose member id is empty; its leave request
 * failed with the broker away, so the coordinator still counts the old member, and the join
 * waited for that member's session to expire (the whole session timeout) before the group
 * went on. Joining with the old id is a rejoin of that member: no wait. If the coordinator no
 * longer knows the id, kafkajs's own `UNKNOWN_MEMBER_ID` handling joins as a new member.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `ConsumerGroup` this wraps or reads. */
export interface ConsumerGroupInternals {
  /** One per kafkajs consumer, kept across its restarts (unlike the `ConsumerGroup`). */
  cluster: object;
  memberId: string | null;
  joinAndSync: (this: ConsumerGroupInternals) => Promise<void>;
  leave: (this: ConsumerGroupInternals) => Promise<void>;
}

/** The member id each consumer (by its cluster) last joined with, until it left the group. */
const lastMemberIds = new WeakMap<object, string>();
/** Consumer groups that have joined once: only a fresh one takes the remembered id. */
const joined = new WeakSet<object>();

/** Wraps `joinAndSync` and `leave` of a `ConsumerGroup` prototype. */
export function wrapConsumerGroup(prototype: ConsumerGroupInternals): void {
  const joinAndSync = prototype.joinAndSync;
  const leave = prototype.leave;
  prototype.joinAndSync = async function (this: ConsumerGroupInternals): Promise<void> {
    if (!joined.has(this) && !this.memberId) {
      this.memberId = lastMemberIds.get(this.cluster) ?? null;
    }
    await joinAndSync.call(this);
    joined.add(this);
    if (this.memberId) lastMemberIds.set(this.cluster, this.memberId);
  };
  prototype.leave = async function (this: ConsumerGroupInternals): Promise<void> {
    await leave.call(this);
    // kafkajs clears the id once the coordinator accepted the leave; a failed leave keeps it.
    if (!this.memberId) lastMemberIds.delete(this.cluster);
  };
}

let applied = false;

/**
 * Installs the wrapper once per process, before any consumer exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installMemberIdReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('consumer member id', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const group = require('kafkajs/src/consumer/consumerGroup') as {
    prototype: ConsumerGroupInternals;
  };
  wrapConsumerGroup(group.prototype);
  applied = true;
}
