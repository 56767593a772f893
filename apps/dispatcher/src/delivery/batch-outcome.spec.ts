import { parseDeliveryOutcomes } from '@app/contracts';

import { batchOutcomeJson, OutcomeCall } from './batch-outcome';
import type { Decision } from './delivery-decision';
import { DeliveryFacts, outcomeJson, TimedResult } from './delivery-record';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const BATCH_ID = '33333333-3333-4333-8333-333333333333';
const NOW = Date.parse('2030-01-02T03:04:05.678Z');
const ANSWERS: TimedResult[] = [
  { webhookId: 'w-1', result: { kind: 'success', status: 200 }, latencyMs: 4.26 },
];
const DELIVERED: Decision = { kind: 'delivered', attempts: 1 };

function facts(n: number, overrides: Partial<DeliveryFacts> = {}): DeliveryFacts {
  return {
    deliveryId: undefined,
    destinationId: DESTINATION_ID,
    sourceId: SOURCE_ID,
    type: 'track',
    messageId: `m-${n}`,
    event: n % 2 === 0 ? 'Order "Completed"' : undefined,
    userId: `u-${n}`,
    anonymousId: n % 3 === 0 ? `a-${n}` : undefined,
    replayOf: undefined,
    attempt: 1,
    firstAttemptAt: undefined,
    webhookIds: undefined,
    ...overrides,
  };
}

/** Each call's outcome as the ledger reads it from a record of the entries. */
function read(entries: readonly { json: string }[]): unknown[] {
  return parseDeliveryOutcomes(`[${entries.map((e) => e.json).join(',')}]`)!.outcomes;
}

/** The same calls' outcomes as if each had travelled alone (`outcomeJson`). */
function alone(calls: readonly OutcomeCall[], answers?: readonly TimedResult[]): unknown[] {
  const json = calls.map((c) => outcomeJson(c.facts, c.decision, answers, NOW, BATCH_ID));
  return parseDeliveryOutcomes(`[${json.join(',')}]`)!.outcomes;
}

const RETRY: Decision = {
  kind: 'retry',
  retry: {
    delaySeconds: 10,
    attempt: 3,
    firstAttemptAt: NOW - 60_000,
    dueAt: NOW + 10_000,
    webhookIds: undefined,
    reason: 'http_5xx',
    lastStatus: 503,
  },
};
const DEAD: Decision = {
  kind: 'dead',
  dead: {
    reason: 'http_4xx',
    lastStatus: 400,
    attempts: 1,
    firstAttemptAt: undefined,
    lastAttemptAt: NOW,
  },
};

describe(batchOutcomeJson.name, () => {
  it.each<[string, OutcomeCall[]]>([
    ['calls sharing a state', [1, 2, 3].map((n) => ({ facts: facts(n), decision: DELIVERED }))],
    [
      'calls of different states, sources and attempts',
      [
        { facts: facts(1), decision: DELIVERED },
        { facts: facts(2, { attempt: 3, firstAttemptAt: NOW - 60_000 }), decision: RETRY },
        { facts: facts(3, { sourceId: undefined }), decision: DEAD },
      ],
    ],
    [
      'calls sharing a decision object but not their source or first attempt',
      [
        { facts: facts(1, { attempt: 2, firstAttemptAt: NOW - 60_000 }), decision: DELIVERED },
        { facts: facts(2, { attempt: 2, firstAttemptAt: NOW - 30_000 }), decision: DELIVERED },
        { facts: facts(3, { attempt: 2, firstAttemptAt: NOW - 30_000 }), decision: DELIVERED },
        { facts: facts(4, { sourceId: 'other-source' }), decision: DELIVERED },
      ],
    ],
    [
      'a replay, a call without a type and odd text',
      [
        { facts: facts(1, { deliveryId: 'd-1', replayOf: 'd-0' }), decision: DELIVERED },
        { facts: facts(2, { type: undefined, messageId: 'tab\there ✓' }), decision: DELIVERED },
      ],
    ],
  ])('stands for the outcomes of %s, each as it would read alone', (_name, calls) => {
    const entries = batchOutcomeJson(calls, ANSWERS, NOW, BATCH_ID);
    expect(entries).toHaveLength(1);
    expect(entries[0].count).toBe(calls.length);
    expect(read(entries)).toEqual(alone(calls, ANSWERS));
  });

  it('writes a shared state once, and no webhooks or batch id when no request was made', () => {
    const calls = [1, 2].map((n) => ({ facts: facts(n), decision: DEAD }));
    const [entry] = batchOutcomeJson(calls, undefined, NOW, undefined);
    const parsed = JSON.parse(entry.json) as Record<string, unknown>;
    expect(parsed).toMatchObject({ destinationId: DESTINATION_ID, result: 'dead' });
    expect(parsed).not.toHaveProperty('webhooks');
    expect(parsed).not.toHaveProperty('batchId');
    expect(parsed.calls).toEqual([
      { messageId: 'm-1', type: 'track', userId: 'u-1' },
      { messageId: 'm-2', type: 'track', event: 'Order "Completed"', userId: 'u-2' },
    ]);
    const json = calls.map((c) => outcomeJson(c.facts, c.decision, undefined, NOW));
    expect(read([entry])).toEqual(parseDeliveryOutcomes(`[${json.join(',')}]`)!.outcomes);
  });

  it('splits many calls into entries of at most the bytes given, every call once', () => {
    const calls = Array.from({ length: 50 }, (_, n) => ({ facts: facts(n), decision: DELIVERED }));
    const entries = batchOutcomeJson(calls, ANSWERS, NOW, BATCH_ID, 1_000);
    expect(entries.length).toBeGreaterThan(2);
    expect(entries.reduce((sum, e) => sum + e.count, 0)).toBe(50);
    for (const entry of entries) expect(entry.json.length).toBeLessThan(1_000 + 400);
    expect(read(entries)).toEqual(alone(calls, ANSWERS));
  });

  it('makes nothing of no calls', () => {
    expect(batchOutcomeJson([], ANSWERS, NOW, BATCH_ID)).toEqual([]);
  });
});

describe(`${parseDeliveryOutcomes.name} with batch outcomes`, () => {
  it('reads a record mixing single and batch outcomes, counting bad calls as invalid', () => {
    const single = outcomeJson(facts(9), DELIVERED, ANSWERS, NOW);
    const [batch] = batchOutcomeJson(
      [1, 2].map((n) => ({ facts: facts(n), decision: DELIVERED })),
      ANSWERS,
      NOW,
      BATCH_ID,
    );
    const broken = `{"destinationId":"${DESTINATION_ID}","at":${NOW},"calls":[{"type":"track"},7]}`;
    const parsed = parseDeliveryOutcomes(`[${single},${batch.json},${broken}]`)!;
    expect(parsed.outcomes.map((o) => [o.messageId, o.batchId])).toEqual([
      ['m-9', undefined],
      ['m-1', BATCH_ID],
      ['m-2', BATCH_ID],
    ]);
    expect(parsed.invalid).toBe(2);
  });
});
