import { CommitRetry, OffsetCommits, PartitionOffset } from './offset-commits';

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

  it('on flush with a request on its way, sends what was gathered once that one is answered', async () => {
    jest.useFakeTimers();
    let finish: () => void = () => undefined;
    const sent: string[][] = [];
    const commits = new OffsetCommits((offsets) => {
      sent.push(offsets.map((o) => o.offset));
      return new Promise((resolve) => (finish = resolve));
    }, 1_000);
    const first = commits.commit({ topic: 't', partition: 0, offset: '1' }, yes);
    const sending = commits.flush();
    const second = commits.commit({ topic: 't', partition: 1, offset: '2' }, yes);
    const flushed = commits.flush();
    expect(sent).toEqual([['1']]);
    finish();
    await sending;
    await Promise.resolve();
    finish();
    await flushed;
    await Promise.all([first, second]);
    expect(sent).toEqual([['1'], ['2']]);
  });

  describe('a refused request', () => {
    const offset = (partition: number, value: string): PartitionOffset => ({
      topic: 't',
      partition,
      offset: value,
    });
    /** Sends recorded; the first `refusals` requests are refused. */
    const refusing = (refusals: number) => {
      const sent: string[][] = [];
      const send = (offsets: PartitionOffset[]): Promise<void> => {
        sent.push(offsets.map((o) => `${o.partition}@${o.offset}`));
        return sent.length <= refusals
          ? Promise.reject(new Error('coordinator moved'))
          : Promise.resolve();
      };
      return { sent, send };
    };
    /** Runs the timers due within `ms` and the promise callbacks they started. */
    const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);
    /** Commits 0@5 through a committer whose first `refusals` requests are refused; it is sent. */
    const afterFirstRequest = async (
      refusals: number,
      retry: CommitRetry,
      current: () => boolean = yes,
    ) => {
      const { sent, send } = refusing(refusals);
      const commits = new OffsetCommits(send, 50, retry);
      void commits.commit(offset(0, '5'), current).catch(() => undefined);
      await advance(50);
      return { sent, commits };
    };

    beforeEach(() => jest.useFakeTimers());

    it('is tried again after the first retry delay, with the same offsets', async () => {
      const { sent, send } = refusing(1);
      const commits = new OffsetCommits(send, 50, { firstMs: 1_000, maxMs: 8_000 });
      const first = commits.commit(offset(0, '5'), yes);
      const rejected = expect(first).rejects.toThrow('coordinator moved');
      await advance(50);
      await rejected;
      await advance(999);
      expect(sent).toEqual([['0@5']]);
      await advance(1);
      expect(sent).toEqual([['0@5'], ['0@5']]);
      await advance(60_000);
      expect(sent).toHaveLength(2);
    });

    it('is replaced by a newer offset of its partition, and others join the retry', async () => {
      const { sent, commits } = await afterFirstRequest(1, { firstMs: 1_000, maxMs: 8_000 });
      const later = commits.commit(offset(0, '9'), yes);
      const other = commits.commit(offset(1, '3'), yes);
      await advance(1_000);
      await Promise.all([later, other]);
      expect(sent).toEqual([['0@5'], ['0@9', '1@3']]);
    });

    it('is dropped once its partition is no longer current', async () => {
      let current = true;
      const { sent } = await afterFirstRequest(1, { firstMs: 1_000, maxMs: 8_000 }, () => current);
      current = false;
      await advance(10_000);
      expect(sent).toEqual([['0@5']]);
    });

    it('backs off doubling up to the maximum, tells of each refusal and of the success after them, and starts over', async () => {
      const failed = jest.fn();
      const resumed = jest.fn();
      const started = Date.now();
      const { sent, commits } = await afterFirstRequest(4, {
        firstMs: 1_000,
        maxMs: 3_000,
        failed,
        resumed,
        now: () => Date.now(),
      });
      const times: number[] = [];
      const count = () => {
        while (times.length < sent.length) times.push(Date.now() - started);
      };
      count();
      for (let step = 1; step < 200; step += 1) {
        await advance(50);
        count();
      }
      // Refused at 50, retried at 1,050 (refused), 3,050 (refused), 6,050 (refused), 9,050.
      expect(times).toEqual([50, 1_050, 3_050, 6_050, 9_050]);
      expect(failed).toHaveBeenCalledTimes(4);
      expect(failed).toHaveBeenLastCalledWith(expect.any(Error), [offset(0, '5')], {
        refusals: 4,
        forMs: 6_000,
      });
      expect(resumed).toHaveBeenCalledWith({ refusals: 4, forMs: 9_000 });
      // After the success a new commit waits only for the gathering time.
      const next = commits.commit(offset(0, '6'), yes);
      await advance(50);
      await next;
      expect(sent.at(-1)).toEqual(['0@6']);
    });

    it('is not tried again once retrying stopped, and a commit waiting for the backoff goes at once', async () => {
      const { sent, commits } = await afterFirstRequest(2, { firstMs: 5_000, maxMs: 5_000 });
      const last = commits.commit(offset(1, '2'), yes);
      const refused = expect(last).rejects.toThrow('coordinator moved');
      await advance(100);
      expect(sent).toEqual([['0@5']]);
      commits.stopRetrying();
      await advance(50);
      await refused;
      expect(sent).toEqual([['0@5'], ['0@5', '1@2']]);
      await advance(60_000);
      expect(sent).toHaveLength(2);
    });
  });
});
