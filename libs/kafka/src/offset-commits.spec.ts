import { OffsetCommits, PartitionOffset } from './offset-commits';

const yes = (): boolean => true;

describe(OffsetCommits.name, () => {
  afterEach(() => jest.useRealTimers());

  it('gathers the partitions’ offsets for the gathering time and sends them in one request', async () => {
    jest.useFakeTimers();
    const sent: PartitionOffset[][] = [];
    const commits = new OffsetCommits((offsets) => {
      sent.push(offsets);
      return Promise.resolve();
    }, 50);
    const a = commits.commit({ topic: 't', partition: 0, offset: '5' }, yes);
    const b = commits.commit({ topic: 't', partition: 1, offset: '7' }, yes);
    const c = commits.commit({ topic: 't', partition: 0, offset: '9' }, yes);
    jest.advanceTimersByTime(49);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(1);
    await Promise.all([a, b, c]);
    expect(sent).toEqual([
      [
        { topic: 't', partition: 0, offset: '9' },
        { topic: 't', partition: 1, offset: '7' },
      ],
    ]);
  });

  it('sends one request at a time; offsets wanted meanwhile go in the next', async () => {
    let finish: () => void = () => undefined;
    const sent: string[][] = [];
    const commits = new OffsetCommits((offsets) => {
      sent.push(offsets.map((o) => o.offset));
      return new Promise((resolve) => (finish = resolve));
    }, 0);
    const first = commits.commit({ topic: 't', partition: 0, offset: '1' }, yes);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = commits.commit({ topic: 't', partition: 0, offset: '2' }, yes);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sent).toEqual([['1']]);
    finish();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sent).toEqual([['1'], ['2']]);
    finish();
    await second;
  });

  it('drops an offset whose partition is no longer current, resolving its waiter', async () => {
    const send = jest.fn(() => Promise.resolve());
    const commits = new OffsetCommits(send, 0);
    await commits.commit({ topic: 't', partition: 0, offset: '3' }, () => false);
    expect(send).not.toHaveBeenCalled();
  });

  it('rejects the waiters of a request that failed', async () => {
    const commits = new OffsetCommits(() => Promise.reject(new Error('rebalancing')), 0);
    await expect(commits.commit({ topic: 't', partition: 0, offset: '3' }, yes)).rejects.toThrow(
      'rebalancing',
    );
  });

  it('sends at once on flush', async () => {
    const send = jest.fn(() => Promise.resolve());
    const commits = new OffsetCommits(send, 60_000);
    const done = commits.commit({ topic: 't', partition: 2, offset: '8' }, yes);
    await commits.flush();
    await done;
    expect(send).toHaveBeenCalledWith([{ topic: 't', partition: 2, offset: '8' }]);
  });
});
