import {
  askFetchWait,
  FetchingGroupInternals,
  fetchWaitOf,
  wrapGroupFetch,
} from './fetch-wait.replacement';

/** A stand-in for kafkajs's ConsumerGroup: records the wait each fetch went with. */
class FakeGroup implements FetchingGroupInternals {
  readonly waited: number[] = [];

  constructor(
    readonly groupId: string,
    public maxWaitTime: number,
  ) {}

  fetch(): Promise<unknown> {
    this.waited.push(this.maxWaitTime);
    return Promise.resolve([]);
  }
}

wrapGroupFetch(FakeGroup.prototype);

describe(wrapGroupFetch.name, () => {
  it('fetches with the wait its group asks for at that moment', async () => {
    let wait = 2_000;
    const stop = askFetchWait('g-moment', () => wait);
    const group = new FakeGroup('g-moment', 100);
    await group.fetch();
    wait = 500;
    await group.fetch();
    stop();
    expect(group.waited).toEqual([2_000, 500]);
  });

  it('keeps the configured wait of a group nobody asks for, and once asking stopped', async () => {
    const stop = askFetchWait('g-asked', () => 2_000);
    const other = new FakeGroup('g-other', 100);
    await other.fetch();
    stop();
    const asked = new FakeGroup('g-asked', 300);
    await asked.fetch();
    expect(other.waited).toEqual([100]);
    expect(asked.waited).toEqual([300]);
    expect(fetchWaitOf('g-asked')).toBeUndefined();
  });

  it('takes the shortest wait of the transports of one group', () => {
    const stops = [askFetchWait('g-two', () => 2_000), askFetchWait('g-two', () => 500)];
    expect(fetchWaitOf('g-two')).toBe(500);
    stops[1]();
    expect(fetchWaitOf('g-two')).toBe(2_000);
    stops[0]();
    expect(fetchWaitOf('g-two')).toBeUndefined();
  });
});
