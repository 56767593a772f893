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
