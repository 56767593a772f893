import { reconnectDelayMs } from './reconnect-backoff';

const BACKOFF = { initialDelayMs: 100, maxDelayMs: 1_000 };

describe(reconnectDelayMs.name, () => {
  it('doubles from the initial delay', () => {
    const delays = [0, 1, 2].map((attempt) => reconnectDelayMs(attempt, BACKOFF, () => 0));
    expect(delays).toEqual([100, 200, 400]);
  });

  it('is capped at the largest delay, even for huge attempt counts', () => {
    expect(reconnectDelayMs(4, BACKOFF, () => 0)).toBe(1_000);
    expect(reconnectDelayMs(5_000, BACKOFF, () => 0)).toBe(1_000);
  });

  it('takes off at most 20% as jitter', () => {
    expect(reconnectDelayMs(0, BACKOFF, () => 0.999_999)).toBe(80);
  });

  it('treats a negative attempt as the first', () => {
    expect(reconnectDelayMs(-3, BACKOFF, () => 0)).toBe(100);
  });
});
