import { settledWithin } from './settled-within';

describe(settledWithin.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers true when the promise resolves in time', async () => {
    await expect(settledWithin(1_000, Promise.resolve('done'))).resolves.toBe(true);
  });

  it('counts a rejection as settled', async () => {
    await expect(settledWithin(1_000, Promise.reject(new Error('failed')))).resolves.toBe(true);
  });

  it('answers false at the deadline when the promise is still pending', async () => {
    const answer = settledWithin(1_000, new Promise(() => undefined));
    await jest.advanceTimersByTimeAsync(999);
    let settled = false;
    void answer.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(answer).resolves.toBe(false);
  });

  it('leaves no timer behind once the promise settled', async () => {
    await settledWithin(1_000, Promise.resolve());
    expect(jest.getTimerCount()).toBe(0);
  });
});
