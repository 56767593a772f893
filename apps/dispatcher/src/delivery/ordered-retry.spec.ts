import { randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';

import { DeliveryOutcome, HEADER, parseDeliveryOutcomes, retryTopic, TOPIC } from '@app/contracts';
import { DurableLater, IncomingRecord, LaneHold, OutgoingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';
import type { DestinationSettings } from '@app/settings';
import { SecretBox } from '@app/signing';

import { BreakerObserver } from './breaker-observer';
import { DispatcherMetrics } from './dispatcher.metrics';
import { DispatchService } from './dispatch.service';
import { DestinationRateLimits } from './rate-limits.service';
import { AttemptResult } from './attempt-result';

const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const NOW = 1_700_000_000_000;
const URL = 'https://one.example/hook';
const OK: AttemptResult = { kind: 'success', status: 200 };
const HTTP_500: AttemptResult = {
  kind: 'retryable',
  reason: 'http_5xx',
  status: 500,
  detail: 'HTTP 500',
};
/** In-place back-off of these specs, in ms. */
const DELAYS_MS = [100, 1_000];

/** Records what it was asked to send. */
class FakeProducer {
  readonly records: OutgoingRecord[] = [];
  send(records: readonly OutgoingRecord[]): Promise<void> {
    this.records.push(...records);
    return Promise.resolve();
  }
  /** The retry and dead records. */
  get sent(): OutgoingRecord[] {
    return this.records.filter((r) => r.topic !== TOPIC.deliveryOutcomes);
  }
  get outcomes(): DeliveryOutcome[] {
    return this.records
      .filter((r) => r.topic === TOPIC.deliveryOutcomes)
      .flatMap((r) => parseDeliveryOutcomes(r.value as string)!.outcomes);
  }
}

/** Answers from a script, one answer a POST (200 once it runs out). */
class ScriptedClient {
  readonly posts: number[] = [];
  constructor(
    private readonly script: AttemptResult[],
    private readonly clock: () => number,
  ) {}
  post(): Promise<AttemptResult> {
    this.posts.push(this.clock());
    return Promise.resolve(this.script.shift() ?? OK);
  }
}

function destination(fields: Partial<DestinationSettings> = {}): DestinationSettings {
  return {
    id: DESTINATION_ID,
    sourceId: 'src-1',
    kind: 'webhooks',
    name: 'hooks',
    enabled: true,
    sharedSecretCiphertext: null,
    webhooks: [{ id: 'w-1', position: 0, url: URL, headers: {} }],
    ordering: { maxPendingCalls: 10, maxHoldSeconds: 5 },
    ...fields,
  };
}

function record(): IncomingRecord {
  const headers = {
    [HEADER.destinationId]: DESTINATION_ID,
    [HEADER.callType]: 'track',
    [HEADER.messageId]: 'm-1',
    [HEADER.userId]: 'u-1',
  };
  return {
    topic: TOPIC.deliveries,
    partition: 0,
    offset: '7',
    key: Buffer.from(`${DESTINATION_ID}:u-1`),
    value: Buffer.from('{"type":"track","userId":"u-1"}'),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
    timestamp: NOW,
  };
}

describe('DispatchService, ordered destinations', () => {
  let settings: Map<string, DestinationSettings>;
  let producer: FakeProducer;
  let metrics: DispatcherMetrics;
  let warn: jest.SpyInstance;

  function service(
    script: AttemptResult[],
    failingAfter = 1_000,
  ): { dispatch: DispatchService; client: ScriptedClient } {
    const registry = new Metrics('test');
    metrics = new DispatcherMetrics(registry);
    const client = new ScriptedClient(script, Date.now);
    const limits = new DestinationRateLimits(
      { partitionsPerTopic: 1, groups: [[TOPIC.deliveries]], now: Date.now },
      registry,
    );
    limits.assigned([TOPIC.deliveries], new Map([[TOPIC.deliveries, [0]]]));
    const dispatch = new DispatchService(
      { destination: (id) => settings.get(id) },
      producer,
      client,
      metrics,
      {
        retryDelaysSeconds: [10, 60],
        retryWindowMs: 4 * 3600 * 1000,
        orderingRetryDelaysMs: DELAYS_MS,
        maxInFlight: 4,
        maxInFlightPerDestination: 4,
        destinationWaitMs: 50,
        breaker: {
          failingAfter,
          failureRatio: 1,
          minAttempts: 1_000,
          windowMs: 60_000,
          coolDownMs: 1_000,
          probes: 1,
        },
        secrets: new SecretBox(randomBytes(32).toString('base64')),
        ledgerSuccessSample: 1,
        maxPendingCalls: 20_000,
        now: Date.now,
      },
      new BreakerObserver(registry),
      limits,
    );
    return { dispatch, client };
  }

  async function held(dispatch: DispatchService): Promise<LaneHold> {
    const answer = await dispatch.handle(record(), 'main');
    expect(answer).toBeInstanceOf(LaneHold);
    return answer as LaneHold;
  }

  /** The hold's final answer's ledger wait, once settled. */
  async function settled(hold: LaneHold): Promise<void> {
    let done = false;
    const answered = (async () => {
      const answer = await hold.settled;
      if (answer instanceof DurableLater) await answer.durable;
    })().finally(() => (done = true));
    // The ledger's outcomes gather on a timer.
    while (!done) await jest.advanceTimersByTimeAsync(10);
    await answered;
  }

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'], now: NOW });
    settings = new Map([[DESTINATION_ID, destination()]]);
    producer = new FakeProducer();
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => {
    warn.mockRestore();
    jest.useRealTimers();
  });

  it('retries a failed call in place after its back-off, with no retry record, and delivers it', async () => {
    const { dispatch, client } = service([HTTP_500, HTTP_500]);
    const hold = await held(dispatch);
    await jest.advanceTimersByTimeAsync(99);
    expect(client.posts).toEqual([NOW]);
    await jest.advanceTimersByTimeAsync(1);
    expect(client.posts).toEqual([NOW, NOW + 100]);
    await jest.advanceTimersByTimeAsync(1_000);
    await settled(hold);
    expect(client.posts).toEqual([NOW, NOW + 100, NOW + 1_100]);
    expect(producer.sent).toEqual([]);
    const results = producer.outcomes.map((o) => [o.result, o.attempts, o.nextAttemptAt]);
    expect(results).toEqual([
      ['retrying', 1, new Date(NOW + 100).toISOString()],
      ['retrying', 2, new Date(NOW + 1_100).toISOString()],
      ['delivered', 3, undefined],
    ]);
    await expect(metrics.orderingRetriesInPlace.get()).resolves.toMatchObject({
      values: [{ value: 2 }],
    });
  });

  it('suspends the ordering when the next wait would pass the longest hold: the call goes to a tier', async () => {
    const { dispatch, client } = service(Array(20).fill(HTTP_500));
    const hold = await held(dispatch);
    await jest.advanceTimersByTimeAsync(6_000);
    await settled(hold);
    // Attempts at 0, 0.1, 1.1, 2.1, 3.1, 4.1 s; the next would be at 5.1 s, past 5 s.
    expect(client.posts).toHaveLength(6);
    expect(producer.sent).toHaveLength(1);
    const [retry] = producer.sent;
    // The tier the last failure planned, by the attempts made (as a tier's retry would).
    expect(retry.topic).toBe(retryTopic(60));
    expect(retry.headers![HEADER.reason].toString()).toBe('ordering_suspended_hold_time');
    expect(producer.outcomes.at(-1)).toMatchObject({
      result: 'retrying',
      reason: 'ordering_suspended_hold_time',
      attempts: 6,
    });
    await expect(metrics.orderingSuspended.get()).resolves.toMatchObject({
      values: [{ labels: { reason: 'hold_time' }, value: 1 }],
    });
  });

  it('suspends at once when the pipeline asks (too many calls waiting)', async () => {
    const { dispatch, client } = service([HTTP_500]);
    const hold = await held(dispatch);
    hold.stop('pending');
    await settled(hold);
    expect(client.posts).toHaveLength(1);
    expect(producer.sent.map((r) => r.headers![HEADER.reason].toString())).toEqual([
      'ordering_suspended_pending',
    ]);
  });

  it('produces nothing once abandoned (the record is read again from the last commit)', async () => {
    const { dispatch, client } = service([HTTP_500]);
    const hold = await held(dispatch);
    hold.stop('abandon');
    await expect(hold.settled).resolves.toBeUndefined();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(client.posts).toHaveLength(1);
    expect(producer.sent).toEqual([]);
    // Only the first failure's outcome, published before the hold was abandoned.
    expect(producer.outcomes.map((o) => o.result)).toEqual(['retrying']);
  });

  it('discards a held call whose destination was deleted meanwhile', async () => {
    const { dispatch, client } = service([HTTP_500]);
    const hold = await held(dispatch);
    settings.clear();
    await jest.advanceTimersByTimeAsync(100);
    await settled(hold);
    expect(client.posts).toHaveLength(1);
    expect(producer.outcomes.at(-1)).toMatchObject({ result: 'discarded' });
  });

  it('sends the call to a tier when ordering is turned off meanwhile', async () => {
    const { dispatch } = service([HTTP_500]);
    const hold = await held(dispatch);
    settings.set(DESTINATION_ID, destination({ ordering: null }));
    await jest.advanceTimersByTimeAsync(100);
    await settled(hold);
    expect(producer.sent.map((r) => r.headers![HEADER.reason].toString())).toEqual([
      'ordering_suspended_ordering_off',
    ]);
  });

  it('suspends the ordering when the breaker opened: the call waits on a tier for its probe', async () => {
    // The first failure opens the breaker; the in-place attempt after the back-off finds it open.
    const { dispatch, client } = service([HTTP_500], 1);
    const hold = await held(dispatch);
    await jest.advanceTimersByTimeAsync(100);
    await settled(hold);
    expect(client.posts).toHaveLength(1);
    expect(producer.sent.map((r) => r.headers![HEADER.reason].toString())).toEqual([
      'ordering_suspended_breaker_open',
    ]);
    await expect(metrics.orderingSuspended.get()).resolves.toMatchObject({
      values: [{ labels: { reason: 'breaker_open' }, value: 1 }],
    });
    // The next call of an ordered destination with its breaker open is not held at all.
    const next = await dispatch.handle(record(), 'main');
    expect(next).not.toBeInstanceOf(LaneHold);
    expect(producer.sent).toHaveLength(2);
  });

  it('holds a call over the rate limit in place rather than sending it to a tier', async () => {
    settings.set(DESTINATION_ID, destination({ rateLimitPerSecond: 1 }));
    const { dispatch, client } = service([]);
    await expect(dispatch.handle(record(), 'main')).resolves.not.toBeInstanceOf(LaneHold);
    // No token left this second: the second call waits in place, then goes with the next token.
    const hold = await held(dispatch);
    expect(client.posts).toEqual([NOW]);
    await jest.advanceTimersByTimeAsync(2_000);
    await settled(hold);
    expect(client.posts).toHaveLength(2);
    expect(client.posts[1]).toBeGreaterThanOrEqual(NOW + 1_000);
    expect(producer.sent).toEqual([]);
  });

  it('leaves a destination without ordering as it was: a failure goes to a tier', async () => {
    settings.set(DESTINATION_ID, destination({ ordering: null }));
    const { dispatch } = service([HTTP_500]);
    const answer = await dispatch.handle(record(), 'main');
    expect(answer).not.toBeInstanceOf(LaneHold);
    expect(producer.sent.map((r) => r.topic)).toEqual([retryTopic(10)]);
  });
});
