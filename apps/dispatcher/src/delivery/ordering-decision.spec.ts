import type { DestinationSettings } from '@app/settings';

import type { DeliveryFacts, RetrySchedule } from './delivery-record';
import {
  HoldInput,
  HoldStep,
  holdsInPlace,
  inPlaceRetry,
  nextAttemptFacts,
  nextHoldStep,
  suspendedForBreaker,
  suspendedRetry,
} from './ordering-decision';

const NOW = 1_700_000_000_000;
const POLICY = { retryDelaysSeconds: [10, 60, 300], retryWindowMs: 3_600_000 };

const FACTS: DeliveryFacts = {
  deliveryId: undefined,
  destinationId: 'dest-1',
  sourceId: 'src-1',
  type: 'track',
  messageId: 'm-1',
  event: undefined,
  userId: 'u-1',
  anonymousId: undefined,
  replayOf: undefined,
  attempt: 1,
  firstAttemptAt: undefined,
  webhookIds: undefined,
};

const RETRY: RetrySchedule = {
  delaySeconds: 10,
  attempt: 2,
  firstAttemptAt: NOW - 5_000,
  dueAt: NOW + 5_000,
  webhookIds: ['w-1'],
  reason: 'http_5xx',
  lastStatus: 500,
};

describe(nextHoldStep.name, () => {
  const base: HoldInput = {
    heldSince: NOW,
    now: NOW,
    waits: 0,
    delaysMs: [100, 1_000, 5_000],
    maxHoldSeconds: 60,
  };
  it.each<[string, Partial<HoldInput>, HoldStep]>([
    ['the first wait is the first back-off', {}, { kind: 'wait', waitMs: 100 }],
    ['later waits climb the back-off', { waits: 1 }, { kind: 'wait', waitMs: 1_000 }],
    ['the last back-off repeats', { waits: 9 }, { kind: 'wait', waitMs: 5_000 }],
    ['a longer Retry-After wins', { atLeastMs: 2_500 }, { kind: 'wait', waitMs: 2_500 }],
    ['a shorter Retry-After does not shorten it', { atLeastMs: 10 }, { kind: 'wait', waitMs: 100 }],
    [
      'a wait ending exactly at the longest hold still waits',
      { now: NOW + 55_000, waits: 2 },
      { kind: 'wait', waitMs: 5_000 },
    ],
    [
      'a wait ending past the longest hold suspends',
      { now: NOW + 55_001, waits: 2 },
      { kind: 'suspend', reason: 'hold_time' },
    ],
    [
      'a Retry-After past the longest hold suspends at once',
      { atLeastMs: 61_000 },
      { kind: 'suspend', reason: 'hold_time' },
    ],
    [
      'too many calls waiting suspends',
      { stop: 'pending' },
      { kind: 'suspend', reason: 'pending' },
    ],
    [
      'a full partition suspends',
      { stop: 'partition_full' },
      { kind: 'suspend', reason: 'partition_full' },
    ],
  ])('%s', (_, input, expected) => {
    expect(nextHoldStep({ ...base, ...input })).toEqual(expected);
  });
});

describe(holdsInPlace.name, () => {
  const ordering = { maxPendingCalls: 100, maxHoldSeconds: 600 };
  const batching = { maxCalls: 10, maxBytes: 2_048, maxWaitMs: 0 };
  const destination = (fields: Partial<DestinationSettings>) =>
    ({ id: 'dest-1', enabled: true, webhooks: [], ...fields }) as unknown as DestinationSettings;
  it.each<[string, DestinationSettings | undefined, 'main' | 'retry', boolean]>([
    ['an ordered destination on the main topic', destination({ ordering }), 'main', true],
    [
      'an ordered destination on a tier (ordering suspended)',
      destination({ ordering }),
      'retry',
      false,
    ],
    ['a destination without ordering', destination({ ordering: null }), 'main', false],
    ['hand-made settings without the field', destination({}), 'main', false],
    ['ordering beside batching (never stored)', destination({ ordering, batching }), 'main', false],
    ['a deleted destination', undefined, 'main', false],
  ])('%s', (_, d, path, expected) => {
    expect(holdsInPlace(d, path)).toBe(expected);
  });
});

describe(suspendedRetry.name, () => {
  it.each<[string, RetrySchedule | undefined, number, Partial<RetrySchedule>]>([
    [
      'after a failed attempt: its planned tier, reason saying why',
      RETRY,
      NOW,
      { ...RETRY, reason: 'ordering_suspended_pending' },
    ],
    [
      'due at once when the planned time has passed',
      RETRY,
      NOW + 9_000,
      { ...RETRY, reason: 'ordering_suspended_pending', dueAt: NOW + 9_000 },
    ],
    [
      'without an attempt: the first tier, the attempt count kept',
      undefined,
      NOW,
      {
        delaySeconds: 10,
        attempt: 1,
        firstAttemptAt: NOW,
        dueAt: NOW + 10_000,
        reason: 'ordering_suspended_pending',
        lastStatus: undefined,
      },
    ],
  ])('%s', (_, last, now, expected) => {
    expect(suspendedRetry(FACTS, last, 'pending', now, POLICY)).toEqual({
      kind: 'retry',
      retry: expect.objectContaining(expected),
    });
  });
});

describe('in-place retries', () => {
  it('count the next attempt, keep the first attempt time and the webhooks still to reach', () => {
    expect(nextAttemptFacts(FACTS, RETRY)).toEqual({
      ...FACTS,
      attempt: 2,
      firstAttemptAt: NOW - 5_000,
      webhookIds: ['w-1'],
    });
  });

  it('tell the ledger the next attempt is due when the wait ends', () => {
    expect(inPlaceRetry(RETRY, NOW, 250)).toEqual({
      kind: 'retry',
      retry: { ...RETRY, dueAt: NOW + 250 },
    });
  });
});

describe(suspendedForBreaker.name, () => {
  it('waits on the tier the breaker rule picks, its reason saying the ordering was suspended', () => {
    expect(suspendedForBreaker(FACTS, NOW + 30_000, NOW, POLICY)).toEqual({
      kind: 'retry',
      retry: expect.objectContaining({
        delaySeconds: 60,
        attempt: 1,
        reason: 'ordering_suspended_breaker_open',
      }),
    });
  });

  it('is dead when no tier fits the retry window, as any call', () => {
    const old = { ...FACTS, firstAttemptAt: NOW - POLICY.retryWindowMs + 1_000 };
    expect(suspendedForBreaker(old, NOW + 30_000, NOW, POLICY)).toMatchObject({
      kind: 'dead',
      dead: { reason: 'retry_window_closed' },
    });
  });
});
