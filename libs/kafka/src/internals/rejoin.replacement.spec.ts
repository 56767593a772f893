import { KafkajsVersionError } from './kafkajs-version';
import {
  beforeRejoin,
  installRejoinReplacement,
  leaveWhileJoining,
  type RejoiningGroupInternals,
  wrapJoinAndSync,
} from './rejoin.replacement';

const JOIN_STEP = Symbol('join step');

/** A stand-in for kafkajs's ConsumerGroup: records when it joined. */
class FakeGroup implements RejoiningGroupInternals {
  constructor(
    readonly groupId: string,
    private readonly events: string[],
  ) {}

  joinAndSync(): Promise<void> {
    this.events.push(`join ${this.groupId}`);
    return Promise.resolve();
  }
}
wrapJoinAndSync(FakeGroup.prototype);

describe(wrapJoinAndSync.name, () => {
  it("runs the group's hooks to their end before it joins", async () => {
    const events: string[] = [];
    const stop = beforeRejoin('g1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push('committed');
    });
    try {
      await new FakeGroup('g1', events).joinAndSync();
    } finally {
      stop();
    }
    expect(events).toEqual(['committed', 'join g1']);
  });

  it("runs no other group's hook, and none once unregistered", async () => {
    const events: string[] = [];
    const stop = beforeRejoin('g2', () => {
      events.push('hook g2');
      return Promise.resolve();
    });
    await new FakeGroup('g3', events).joinAndSync();
    stop();
    await new FakeGroup('g2', events).joinAndSync();
    expect(events).toEqual(['join g3', 'join g2']);
  });
});

/**
 * A stand-in for kafkajs's ConsumerGroup whose join waits at the broker until released, and
 * which, as kafkajs does, tries its join step again when the coordinator forgot the member.
 */
class JoiningGroup implements RejoiningGroupInternals {
  joins = 0;
  leaves = 0;
  /** Answers the join waiting at the broker. */
  answer?: (error?: Error) => void;

  constructor(
    readonly groupId: string,
    public memberId: string | null,
  ) {}

  [JOIN_STEP](): Promise<void> {
    this.joins += 1;
    return new Promise((resolve, reject) => {
      this.answer = (error) => (error ? reject(error) : resolve());
    });
  }

  async joinAndSync(): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        return await (this as unknown as Record<symbol, () => Promise<void>>)[JOIN_STEP]();
      } catch (error) {
        if (attempt === 2) throw error;
        this.memberId = null;
      }
    }
  }

  leave(): Promise<void> {
    this.leaves += 1;
    // The coordinator answers the member's join that waited.
    this.answer?.(new Error('UNKNOWN_MEMBER_ID'));
    return Promise.resolve();
  }
}
wrapJoinAndSync(JoiningGroup.prototype, JOIN_STEP);

describe(leaveWhileJoining.name, () => {
  it.each([
    { case: 'this member of this group', groupId: 'g4', memberId: 'm1', left: true },
    { case: 'another member', groupId: 'g4', memberId: 'm2', left: false },
    { case: 'another group', groupId: 'g5', memberId: 'm1', left: false },
  ])('with $case joining, leaves: $left', async ({ groupId, memberId, left }) => {
    const group = new JoiningGroup('g4', 'm1');
    const joined = group.joinAndSync();
    await Promise.resolve();
    await expect(leaveWhileJoining(groupId, memberId)).resolves.toBe(left);
    expect(group.leaves).toBe(left ? 1 : 0);
    if (left) {
      // Its join is answered, and not tried again as a new member.
      await expect(joined).rejects.toThrow('left g4 while joining');
      expect(group.joins).toBe(1);
    } else {
      group.answer?.();
      await expect(joined).resolves.toBeUndefined();
    }
  });

  it('leaves nothing once the join is over', async () => {
    const group = new JoiningGroup('g6', 'm1');
    const joined = group.joinAndSync();
    await Promise.resolve();
    group.answer?.();
    await joined;
    await expect(leaveWhileJoining('g6', 'm1')).resolves.toBe(false);
    expect(group.leaves).toBe(0);
  });
});

describe(installRejoinReplacement.name, () => {
  it('refuses another kafkajs than the pinned one', () => {
    expect(() => installRejoinReplacement('2.3.0')).toThrow(KafkajsVersionError);
  });
});
