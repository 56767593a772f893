import { Semaphore } from './semaphore';

describe('Semaphore', () => {
  it('hands a released slot to the oldest waiter', async () => {
    const s = new Semaphore(1);
    await s.acquire();
    const order: string[] = [];
    const a = s.acquire().then(() => order.push('a'));
    const b = s.acquire().then(() => order.push('b'));
    expect(s.tryAcquire()).toBe(false);
    s.release();
    await a;
    s.release();
    await b;
    expect(order).toEqual(['a', 'b']);
  });

  it('acquireWithin gives up after the wait, and leaves no waiter behind', async () => {
    const s = new Semaphore(1);
    expect(await s.acquireWithin(10)).toBe(true);
    expect(await s.acquireWithin(10)).toBe(false);
    s.release();
    // The timed-out waiter did not take the freed slot.
    expect(s.tryAcquire()).toBe(true);
  });

  it('acquireWithin takes a slot released during the wait', async () => {
    const s = new Semaphore(1);
    await s.acquire();
    const waiting = s.acquireWithin(5_000);
    s.release();
    expect(await waiting).toBe(true);
    expect(s.tryAcquire()).toBe(false);
  });
});

describe('Semaphore deadlines', () => {
  afterEach(() => jest.useRealTimers());

  it('drops its deadline timer once no waiter is left', async () => {
    jest.useFakeTimers();
    const s = new Semaphore(1);
    await s.acquire();
    const waiting = s.acquireWithin(5_000);
    expect(jest.getTimerCount()).toBe(1);
    s.release();
    expect(await waiting).toBe(true);
    // Nothing would keep the process awake (or wake it) for the granted waiter's deadline.
    expect(jest.getTimerCount()).toBe(0);
  });

  it('gives up on each waiter at its own deadline, in any order, and serves the rest in order', async () => {
    jest.useFakeTimers();
    const s = new Semaphore(1);
    expect(s.tryAcquire()).toBe(true);
    const results: string[] = [];
    const long = s.acquireWithin(300).then((ok) => results.push(`long ${ok}`));
    const forever = s.acquire().then(() => results.push('forever'));
    const short = s.acquireWithin(100).then((ok) => results.push(`short ${ok}`));
    await jest.advanceTimersByTimeAsync(99);
    expect(results).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    await short;
    expect(results).toEqual(['short false']);
    s.release();
    await long;
    expect(results).toEqual(['short false', 'long true']);
    await jest.advanceTimersByTimeAsync(1_000);
    s.release();
    await forever;
    expect(results).toEqual(['short false', 'long true', 'forever']);
  });
});
