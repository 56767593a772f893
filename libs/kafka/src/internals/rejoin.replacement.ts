/**
 * Wraps kafkajs's `ConsumerGroup.joinAndSync` so that a member about to join its group again
 * (a rebalance: a member joined or left, as in every step of a rolling update) first runs the
 * hooks its transports registered for the group: finish the records in flight and commit what
 * finished while the member still owns its partitions. kafkajs 2.2.4 offers no hook before it
 * rejoins (the Java client's `onPartitionsRevoked`); without one, what a member finished in the
 * last moments before a rebalance, and what it had in flight, was not committed, and the
 * partition's next owner handled it again: duplicates at every step of a rolling update. The
 * coordinator takes commits of the old generation until the group's new one is formed, which
 * waits for this member's join.
 */

import { assertPinnedKafkajs, installedKafkajsVersion } from './kafkajs-version';

/** The parts of kafkajs's `ConsumerGroup` this wraps or reads. */
export interface RejoiningGroupInternals {
  groupId: string;
  memberId?: string | null;
  joinAndSync: (this: RejoiningGroupInternals) => Promise<void>;
  leave?: (this: RejoiningGroupInternals) => Promise<void>;
}

/** The groups of this process whose join is under way. */
const joining = new Set<RejoiningGroupInternals>();

/**
 * The key of kafkajs's private join step (`ConsumerGroup[PRIVATE.JOIN]`), which its
 * `joinAndSync` tries again until the group is joined.
 */
let joinStep: symbol | undefined;

/** Hooks by group id; each resolves once its transport is ready for the group's rebalance. */
const hooks = new Map<string, Set<() => Promise<void>>>();

/**
 * Runs `hook` before each join of `groupId` by a consumer of this process (the first join too:
 * a hook with nothing to do resolves at once). A hook must not reject, and should bound its
 * wait: the whole group waits for this member's join. Returns the unregistering function.
 */
export function beforeRejoin(groupId: string, hook: () => Promise<void>): () => void {
  let registered = hooks.get(groupId);
  if (!registered) hooks.set(groupId, (registered = new Set()));
  registered.add(hook);
  return () => {
    registered.delete(hook);
    if (registered.size === 0 && hooks.get(groupId) === registered) hooks.delete(groupId);
  };
}

/** Wraps `joinAndSync` of a `ConsumerGroup` prototype. */
export function wrapJoinAndSync(prototype: RejoiningGroupInternals, step?: symbol): void {
  if (step !== undefined) joinStep = step;
  const joinAndSync = prototype.joinAndSync;
  prototype.joinAndSync = async function (this: RejoiningGroupInternals): Promise<void> {
    const registered = hooks.get(this.groupId);
    if (registered) await Promise.all([...registered].map((hook) => hook()));
    joining.add(this);
    try {
      await joinAndSync.call(this);
    } finally {
      joining.delete(this);
    }
  };
}

/**
 * Leaves `groupId` as `memberId` if that member's join is under way, rather than waiting for a
 * join the broker answers only once every other member joined too: the coordinator answers the
 * pending join at once, and the member does not join again (kafkajs's `joinAndSync` would, as a
 * new member). Call once the consumer stops (kafkajs's `disconnect` begun) and its finished
 * records are committed. Resolves false when no such join was under way.
 */
export async function leaveWhileJoining(groupId: string, memberId: string): Promise<boolean> {
  const group = [...joining].find((g) => g.groupId === groupId && g.memberId === memberId);
  if (!group?.leave || joinStep === undefined) return false;
  // Each further try of the join fails (retriable: the consumer's loop, already stopped, ends).
  Object.defineProperty(group, joinStep, {
    value: () => Promise.reject(new Error(`member ${memberId} left ${groupId} while joining`)),
  });
  await group.leave();
  return true;
}

let applied = false;

/**
 * Installs the wrapper once per process, before any consumer exists
 * (`installKafkajsReplacements` does).
 * @param found the kafkajs version to check (the installed one; specs pass another)
 * @throws {KafkajsVersionError} on any kafkajs but the pinned one, replacing nothing
 */
export function installRejoinReplacement(found = installedKafkajsVersion()): void {
  assertPinnedKafkajs('rejoin hook', found);
  if (applied) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const group = require('kafkajs/src/consumer/consumerGroup') as {
    prototype: RejoiningGroupInternals;
  };
  wrapJoinAndSync(group.prototype);
  joinStep = Object.getOwnPropertySymbols(group.prototype).find(
    (key) => key.description === 'private:ConsumerGroup:join',
  );
  applied = true;
}
