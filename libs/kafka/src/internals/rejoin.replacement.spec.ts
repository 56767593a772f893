import { KafkajsVersionError } from './kafkajs-version';
import {
  beforeRejoin,
  installRejoinReplacement,
  type RejoiningGroupInternals,
  wrapJoinAndSync,
} from './rejoin.replacement';

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

describe(installRejoinReplacement.name, () => {
  it('refuses another kafkajs than the pinned one', () => {
    expect(() => installRejoinReplacement('2.3.0')).toThrow(KafkajsVersionError);
  });
});
