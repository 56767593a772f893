import { ConsumerGroupInternals, wrapConsumerGroup } from './member-id.replacement';

/** A stand-in for kafkajs's ConsumerGroup: joins under the id it has, or gets `next`. */
class FakeGroup implements ConsumerGroupInternals {
  memberId: string | null = null;
  joinedWith: (string | null)[] = [];
  leaveFails = false;

  constructor(
    readonly cluster: object,
    private readonly next: string,
  ) {}

  joinAndSync(): Promise<void> {
    this.joinedWith.push(this.memberId);
    this.memberId ??= this.next;
    return Promise.resolve();
  }

  leave(): Promise<void> {
    if (this.leaveFails) return Promise.reject(new Error('broker away'));
    this.memberId = null;
    return Promise.resolve();
  }
}

wrapConsumerGroup(FakeGroup.prototype);

describe(wrapConsumerGroup.name, () => {
  it('joins a consumer restarted after a failed leave under its old member id', async () => {
    const cluster = {};
    const first = new FakeGroup(cluster, 'member-1');
    await first.joinAndSync();
    first.leaveFails = true;
    await expect(first.leave()).rejects.toThrow('broker away');
    const restarted = new FakeGroup(cluster, 'member-2');
    await restarted.joinAndSync();
    expect(restarted.joinedWith).toEqual(['member-1']);
  });

  it('joins as a new member once the old one left the group', async () => {
    const cluster = {};
    const first = new FakeGroup(cluster, 'member-1');
    await first.joinAndSync();
    await first.leave();
    const restarted = new FakeGroup(cluster, 'member-2');
    await restarted.joinAndSync();
    expect(restarted.joinedWith).toEqual([null]);
    expect(restarted.memberId).toBe('member-2');
  });

  it('never lends a member id to another consumer', async () => {
    await new FakeGroup({}, 'member-1').joinAndSync();
    const other = new FakeGroup({}, 'member-2');
    await other.joinAndSync();
    expect(other.joinedWith).toEqual([null]);
  });

  it('does not bring back an id a running group dropped (kafkajs rejoins it as new)', async () => {
    const cluster = {};
    const group = new FakeGroup(cluster, 'member-1');
    await group.joinAndSync();
    group.memberId = null; // kafkajs does this on UNKNOWN_MEMBER_ID
    await group.joinAndSync();
    expect(group.joinedWith).toEqual([null, null]);
  });
});
