import { planRetry, RetryPlanInput } from './retry-plan';

const LADDER = [10, 60, 300, 1200, 3600];
const NOW = 1_700_000_000_000;
const HOURS_4 = 4 * 3600 * 1000;

function plan(overrides: Partial<RetryPlanInput>): ReturnType<typeof planRetry> {
  return planRetry({
    ladder: LADDER,
    failures: 1,
    now: NOW,
    firstAttemptAt: NOW,
    windowMs: HOURS_4,
    ...overrides,
  });
}

describe(planRetry.name, () => {
  it.each([
    [1, 10],
    [2, 60],
    [3, 300],
    [4, 1200],
    [5, 3600],
  ])('after %i failure(s) waits %i s', (failures, delaySeconds) => {
    expect(plan({ failures })).toEqual({
      kind: 'retry',
      delaySeconds,
      dueAt: NOW + delaySeconds * 1000,
    });
  });

  it('uses the first tier when no attempt was made yet', () => {
    expect(plan({ failures: 0 })).toEqual({ kind: 'retry', delaySeconds: 10, dueAt: NOW + 10_000 });
  });

  it('repeats the last delay past the end of the ladder', () => {
    const windowMs = 100 * 3600 * 1000;
    expect(plan({ failures: 6, windowMs })).toMatchObject({ kind: 'retry', delaySeconds: 3600 });
    expect(plan({ failures: 40, windowMs })).toMatchObject({ kind: 'retry', delaySeconds: 3600 });
  });

  it('picks the shortest tier at least as long as a longer Retry-After', () => {
    expect(plan({ retryAfterMs: 61_000 })).toEqual({
      kind: 'retry',
      delaySeconds: 300,
      dueAt: NOW + 300_000,
    });
    expect(plan({ retryAfterMs: 60_000 })).toMatchObject({ delaySeconds: 60 });
    expect(plan({ retryAfterMs: 11_000 })).toMatchObject({ delaySeconds: 60 });
  });

  it('keeps the ladder delay when Retry-After is shorter', () => {
    expect(plan({ failures: 3, retryAfterMs: 5_000 })).toMatchObject({ delaySeconds: 300 });
    expect(plan({ failures: 1, retryAfterMs: 0 })).toMatchObject({ delaySeconds: 10 });
  });

  it('takes the longest tier when Retry-After is longer than every tier', () => {
    const windowMs = 100 * 3600 * 1000;
    expect(plan({ retryAfterMs: 2 * 3600 * 1000, windowMs })).toEqual({
      kind: 'retry',
      delaySeconds: 3600,
      dueAt: NOW + 3_600_000,
    });
  });

  it('finds tiers in an unsorted ladder', () => {
    expect(plan({ ladder: [60, 10, 3600, 300], retryAfterMs: 200_000 })).toMatchObject({
      delaySeconds: 300,
    });
  });

  it('closes the window when the next attempt would be due after it', () => {
    const firstAttemptAt = NOW - HOURS_4 + 9_999;
    expect(plan({ firstAttemptAt })).toEqual({ kind: 'window_closed' });
  });

  it('still retries when the next attempt is due exactly at the edge of the window', () => {
    const firstAttemptAt = NOW - HOURS_4 + 10_000;
    expect(plan({ firstAttemptAt })).toEqual({
      kind: 'retry',
      delaySeconds: 10,
      dueAt: firstAttemptAt + HOURS_4,
    });
  });

  it('closes the window when Retry-After pushes the attempt past it', () => {
    const firstAttemptAt = NOW - HOURS_4 + 30 * 60 * 1000;
    expect(plan({ firstAttemptAt })).toMatchObject({ kind: 'retry', delaySeconds: 10 });
    expect(plan({ firstAttemptAt, retryAfterMs: 40 * 60 * 1000 })).toEqual({
      kind: 'window_closed',
    });
  });
});
