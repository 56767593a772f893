import type { DestinationSettings, WebhookSettings } from '@app/settings';

import {
  admit,
  decideAttempt,
  decideBatch,
  Decision,
  leaveMainTopic,
  waitForBreaker,
} from './delivery-decision';
import type { DeliveryFacts } from './delivery-record';
import type { AttemptResult } from './attempt-result';

const NOW = 1_700_000_000_000;
const POLICY = { retryDelaysSeconds: [10, 60, 300], retryWindowMs: 3_600_000 };

const OK: AttemptResult = { kind: 'success', status: 204 };
const E500: AttemptResult = { kind: 'retryable', reason: 'http_5xx', status: 500, detail: '' };
const E429: AttemptResult = {
  kind: 'retryable',
  reason: 'http_429',
  status: 429,
  detail: '',
  retryAfterMs: 120_000,
};
const TIMEOUT: AttemptResult = { kind: 'retryable', reason: 'timeout', detail: '' };
const E404: AttemptResult = { kind: 'permanent', reason: 'http_4xx', status: 404, detail: '' };
const TLS: AttemptResult = { kind: 'permanent', reason: 'tls_error', detail: '' };

function facts(overrides: Partial<DeliveryFacts> = {}): DeliveryFacts {
  return {
    deliveryId: 'd-1',
    destinationId: 'dest-1',
    sourceId: 'src-1',
    type: 'track',
    messageId: 'm-1',
    event: undefined,
    userId: undefined,
    anonymousId: undefined,
    replayOf: undefined,
    attempt: 1,
    firstAttemptAt: undefined,
    webhookIds: undefined,
    ...overrides,
  };
}

function hooks(count: number): WebhookSettings[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `w-${i + 1}`,
    position: i,
    url: `https://h${i + 1}.example/`,
    headers: {},
  }));
}

describe(decideAttempt.name, () => {
  const later = NOW - 600_000;
  it.each<[string, Partial<DeliveryFacts>, AttemptResult[], Decision]>([
    ['any 2xx delivers', {}, [E500, OK], { kind: 'delivered', attempts: 1 }],
    [
      'retryable failures go to the first tier with their webhooks',
      {},
      [E500, E404, TIMEOUT],
      {
        kind: 'retry',
        retry: {
          delaySeconds: 10,
          attempt: 2,
          firstAttemptAt: NOW,
          dueAt: NOW + 10_000,
          webhookIds: ['w-1', 'w-3'],
          reason: 'http_5xx',
          lastStatus: 500,
        },
      },
    ],
    [
      'a Retry-After picks a tier at least that long',
      { attempt: 2, firstAttemptAt: later },
      [E429],
      {
        kind: 'retry',
        retry: {
          delaySeconds: 300,
          attempt: 3,
          firstAttemptAt: later,
          dueAt: NOW + 300_000,
          webhookIds: ['w-1'],
          reason: 'http_429',
          lastStatus: 429,
        },
      },
    ],
    [
      'only permanent failures: dead with the first reason',
      {},
      [TLS, E404],
      {
        kind: 'dead',
        dead: {
          reason: 'tls_error',
          lastStatus: 404,
          attempts: 1,
          firstAttemptAt: NOW,
          lastAttemptAt: NOW,
        },
      },
    ],
    [
      'a next attempt after the window: dead',
      { attempt: 5, firstAttemptAt: NOW - 3_590_000 },
      [E500],
      {
        kind: 'dead',
        dead: {
          reason: 'retry_window_closed',
          lastStatus: 500,
          attempts: 5,
          firstAttemptAt: NOW - 3_590_000,
          lastAttemptAt: NOW,
        },
      },
    ],
  ])('%s', (_name, factOverrides, results, expected) => {
    const decision = decideAttempt({
      facts: facts(factOverrides),
      webhooks: hooks(results.length),
      results,
      startedAt: NOW,
      now: NOW,
      policy: POLICY,
    });
    expect(decision).toEqual(expected);
  });
});

describe(decideBatch.name, () => {
  it.each<[string, AttemptResult]>([
    ['delivered', OK],
    ['retried', E500],
    ['dead', E404],
  ])(
    'decides each call as decideAttempt does, sharing one decision where attempts agree: %s',
    (_name, result) => {
      const calls = [
        facts(),
        facts({ messageId: 'm-2' }),
        facts({ attempt: 3, firstAttemptAt: NOW - 60_000 }),
        facts({ attempt: 3, firstAttemptAt: NOW - 60_000, messageId: 'm-4' }),
        facts({ attempt: 3, firstAttemptAt: NOW - 30_000 }),
        facts(),
      ].map((f) => ({ facts: f }));
      const input = { webhooks: hooks(1), results: [result], startedAt: NOW, now: NOW };
      const decisions = decideBatch(calls, { ...input, policy: POLICY });
      expect(decisions).toEqual(
        calls.map(({ facts: f }) => decideAttempt({ ...input, facts: f, policy: POLICY })),
      );
      expect(decisions[1]).toBe(decisions[0]);
      expect(decisions[3]).toBe(decisions[2]);
      expect(new Set(decisions).size).toBe(4);
    },
  );
});

describe(admit.name, () => {
  const destination = (overrides: Partial<DestinationSettings> = {}): DestinationSettings => ({
    id: 'dest-1',
    sourceId: 'src-1',
    kind: 'webhooks',
    name: 'hooks',
    enabled: true,
    sharedSecretCiphertext: null,
    webhooks: hooks(3),
    ...overrides,
  });

  it.each<[string, DestinationSettings | undefined, Partial<DeliveryFacts>, string]>([
    ['a deleted destination discards', undefined, {}, 'discarded:destination_deleted'],
    [
      'a disabled destination discards',
      destination({ enabled: false }),
      {},
      'discarded:destination_disabled',
    ],
    [
      'a retry whose webhooks were all removed is dead',
      destination(),
      { webhookIds: ['w-9'] },
      'dead:webhooks_removed',
    ],
    ['a first attempt covers every webhook', destination(), {}, 'send:w-1,w-2,w-3'],
    [
      'a retry covers its subset still present',
      destination(),
      { webhookIds: ['w-3', 'w-9'] },
      'send:w-3',
    ],
  ])('%s', (_name, current, factOverrides, expected) => {
    const admission = admit(facts(factOverrides), current, NOW);
    const summary =
      admission.kind === 'send'
        ? `send:${admission.webhooks.map((w) => w.id).join(',')}`
        : admission.decision.kind === 'discarded'
          ? `discarded:${admission.decision.reason}`
          : admission.decision.kind === 'dead'
            ? `dead:${admission.decision.dead.reason}`
            : admission.decision.kind;
    expect(summary).toBe(expected);
  });
});

describe(leaveMainTopic.name, () => {
  it('sends the delivery to the first tier, keeping its attempt number and webhooks', () => {
    expect(leaveMainTopic(facts({ webhookIds: ['w-2'] }), 'destination_busy', NOW, POLICY)).toEqual(
      {
        kind: 'retry',
        retry: {
          delaySeconds: 10,
          attempt: 1,
          firstAttemptAt: NOW,
          dueAt: NOW + 10_000,
          webhookIds: ['w-2'],
          reason: 'destination_busy',
          lastStatus: undefined,
        },
      },
    );
  });
});

describe(waitForBreaker.name, () => {
  // Ladder 10 s, 1 min, 5 min; window 1 h from the first attempt.
  it.each<[string, Partial<DeliveryFacts>, number, string]>([
    ['probe in 5 s: the 10 s tier', {}, NOW + 5_000, 'retry 10s attempt 1'],
    ['probe in 30 s: the 1 min tier', {}, NOW + 30_000, 'retry 60s attempt 1'],
    ['probe due already (half-open, probe out): the shortest tier', {}, NOW, 'retry 10s attempt 1'],
    ['probe later than every tier: the longest', {}, NOW + 900_000, 'retry 300s attempt 1'],
    [
      'a retry keeps its attempt count',
      { attempt: 4, firstAttemptAt: NOW - 20_000 },
      NOW + 30_000,
      'retry 60s attempt 4',
    ],
    [
      'a delivery a minute old waits at least the 1 min tier',
      { attempt: 2, firstAttemptAt: NOW - 60_000 },
      NOW + 5_000,
      'retry 60s attempt 2',
    ],
    [
      'one 10 minutes old waits the 5 min tier',
      { attempt: 2, firstAttemptAt: NOW - 600_000 },
      NOW + 5_000,
      'retry 300s attempt 2',
    ],
    [
      'the window closes before the tier it wants: the longest that fits',
      { attempt: 3, firstAttemptAt: NOW - 3_570_000 },
      NOW + 30_000,
      'retry 10s attempt 3',
    ],
    [
      'no tier fits the window: dead, as any retry would be',
      { attempt: 3, firstAttemptAt: NOW - 3_595_000 },
      NOW + 30_000,
      'dead retry_window_closed',
    ],
  ])('%s', (_name, overrides, untilMs, expected) => {
    const decision = waitForBreaker(facts(overrides), untilMs, NOW, POLICY);
    const summary =
      decision.kind === 'retry'
        ? `retry ${decision.retry.delaySeconds}s attempt ${decision.retry.attempt}`
        : decision.kind === 'dead'
          ? `dead ${decision.dead.reason}`
          : decision.kind;
    expect(summary).toBe(expected);
  });

  it('marks the record with the reason, keeps the webhooks and starts the window now when new', () => {
    const decision = waitForBreaker(facts({ webhookIds: ['w-2'] }), NOW + 5_000, NOW, POLICY);
    expect(decision).toEqual({
      kind: 'retry',
      retry: {
        delaySeconds: 10,
        attempt: 1,
        firstAttemptAt: NOW,
        dueAt: NOW + 10_000,
        webhookIds: ['w-2'],
        reason: 'breaker_open',
        lastStatus: undefined,
      },
    });
  });
});
