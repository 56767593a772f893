import { createHmac, randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';

import {
  deliveryIdFor,
  DeliveryOutcome,
  HEADER,
  outcomeDeliveryId,
  parseDeliveryOutcome,
  parseDeliveryOutcomes,
  retryTopic,
  TOPIC,
} from '@app/contracts';
import { DurableLater, IncomingRecord, OutgoingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';
import type { DestinationSettings, WebhookSettings } from '@app/settings';
import { SecretBox } from '@app/signing';

import { BreakerObserver } from './breaker-observer';
import { BreakerPolicy } from './circuit-breaker';
import { DispatcherMetrics } from './dispatcher.metrics';
import { DispatchOptions, DispatchService } from './dispatch.service';
import { DestinationRateLimits } from './rate-limits.service';
import { AttemptResult } from './attempt-result';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const NOW = 1_700_000_000_000;
/** Opens after two failures in a row; probes once after 30 s. */
const BREAKER: BreakerPolicy = {
  failingAfter: 2,
  failureRatio: 0.7,
  minAttempts: 10,
  windowMs: 300_000,
  coolDownMs: 30_000,
  probes: 1,
};
const WINDOW_MS = 4 * 3600 * 1000;
const KEY = Buffer.from(`${DESTINATION_ID}:u-1`);
const BODY = Buffer.from('{"version":1,"type":"track","userId":"u-1","event":"Bought ✓"}');
const DELETE_BODY = Buffer.from(
  '{"type":"delete","userId":"u-1","timestamp":"2030-01-01T00:00:00.000Z"}',
);

const URL_1 = 'https://one.example/hook';
const URL_2 = 'https://two.example/hook';
const URL_3 = 'https://three.example/hook';

const OK: AttemptResult = { kind: 'success', status: 200 };
const HTTP_500: AttemptResult = {
  kind: 'retryable',
  reason: 'http_5xx',
  status: 500,
  detail: 'HTTP 500',
};
const REFUSED: AttemptResult = {
  kind: 'retryable',
  reason: 'connection_error',
  detail: 'ECONNREFUSED',
};
const HTTP_404: AttemptResult = {
  kind: 'permanent',
  reason: 'http_4xx',
  status: 404,
  detail: 'HTTP 404',
};

/** Records every batch it was asked to send. */
class FakeProducer {
  readonly batches: OutgoingRecord[][] = [];
  failure?: Error;

  send(records: readonly OutgoingRecord[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.batches.push([...records]);
    return Promise.resolve();
  }

  /** The retry and dead records sent, without the ledger's outcome records. */
  get sent(): OutgoingRecord[] {
    return this.batches.flat().filter((r) => r.topic !== TOPIC.deliveryOutcomes);
  }

  /** The ledger's outcomes sent (one per record, or several), read. */
  get outcomes(): DeliveryOutcome[] {
    return this.batches
      .flat()
      .filter((r) => r.topic === TOPIC.deliveryOutcomes)
      .flatMap((r) => parseDeliveryOutcomes(r.value as string)!.outcomes);
  }
}

/** Answers each URL as scripted (200 when not), recording every POST. */
class FakeClient {
  readonly posts: { url: string; body: Buffer; headers: Record<string, string> }[] = [];
  readonly answers = new Map<string, AttemptResult>();
  /** URLs whose answers wait until the test settles them. */
  readonly held = new Map<string, Promise<AttemptResult>>();

  post(url: string, body: Buffer, headers: Record<string, string>): Promise<AttemptResult> {
    this.posts.push({ url, body, headers });
    return this.held.get(url) ?? Promise.resolve(this.answers.get(url) ?? OK);
  }

  urls(): string[] {
    return this.posts.map((p) => p.url).sort();
  }
}

/** Destinations by id, replaceable during a test. */
class FakeSettings {
  readonly destinations = new Map<string, DestinationSettings>();

  destination(id: string): DestinationSettings | undefined {
    return this.destinations.get(id);
  }
}

function webhook(id: string, url: string, headers: Record<string, string> = {}): WebhookSettings {
  return { id, position: Number(id.slice(2)) - 1, url, headers };
}

function destination(overrides: Partial<DestinationSettings> = {}): DestinationSettings {
  return {
    id: DESTINATION_ID,
    sourceId: SOURCE_ID,
    kind: 'webhooks',
    name: 'hooks',
    enabled: true,
    sharedSecretCiphertext: null,
    webhooks: [webhook('w-1', URL_1), webhook('w-2', URL_2)],
    ...overrides,
  };
}

/** A delivery record as the router (or a retry tier) produced it; undefined removes a header. */
function delivery(
  headers: Record<string, string | undefined> = {},
  value: Buffer = BODY,
  topic: string = TOPIC.deliveries,
): IncomingRecord {
  const all: Record<string, string | undefined> = {
    [HEADER.sourceId]: SOURCE_ID,
    [HEADER.destinationId]: DESTINATION_ID,
    [HEADER.callType]: 'track',
    [HEADER.messageId]: 'm-1',
    ...headers,
  };
  return {
    topic,
    partition: 0,
    offset: '11',
    key: KEY,
    value,
    headers: Object.fromEntries(
      Object.entries(all).map(([name, text]) => [
        name,
        text === undefined ? undefined : Buffer.from(text),
      ]),
    ),
    timestamp: NOW - 50,
  };
}

function deleteDelivery(headers: Record<string, string | undefined> = {}): IncomingRecord {
  return delivery(
    { [HEADER.callType]: 'delete', [HEADER.messageId]: 'del-1', ...headers },
    DELETE_BODY,
  );
}

/** An outgoing record's headers as text. */
function texts(record: OutgoingRecord): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record.headers ?? {}).map(([name, value]) => [name, value.toString()]),
  );
}

/** The value of a counter for the given labels (0 when never incremented). */
async function counted<L extends string>(
  counter: Counter<L>,
  labels: Partial<Record<L, string>>,
): Promise<number> {
  const { values } = await counter.get();
  const match = values.find((v) =>
    Object.entries(labels).every(([name, value]) => v.labels[name as L] === value),
  );
  return match?.value ?? 0;
}

/** Lets pending promise callbacks and I/O callbacks run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe(DispatchService.name, () => {
  let warn: jest.SpyInstance;
  let settings: FakeSettings;
  let producer: FakeProducer;
  let client: FakeClient;
  let metrics: DispatcherMetrics;
  let registry: Metrics;
  let observer: BreakerObserver;
  let box: SecretBox;
  let now: number;

  /** Rate limits of a replica that owns every delivery partition. */
  function rateLimits(): DestinationRateLimits {
    const topics = [TOPIC.deliveries];
    const limits = new DestinationRateLimits(
      { partitionsPerTopic: 1, groups: [topics], now: () => now },
      new Metrics('test'),
    );
    limits.assigned(topics, new Map([[TOPIC.deliveries, [0]]]));
    return limits;
  }

  function service(overrides: Partial<DispatchOptions> = {}): DispatchService {
    return new DispatchService(
      settings,
      producer,
      client,
      metrics,
      {
        retryDelaysSeconds: [10, 60, 300, 1200, 3600],
        retryWindowMs: WINDOW_MS,
        maxInFlight: 16,
        maxInFlightPerDestination: 4,
        destinationWaitMs: 50,
        breaker: BREAKER,
        secrets: box,
        ledgerSuccessSample: 1,
        maxPendingCalls: 20_000,
        now: () => now,
        ...overrides,
      },
      observer,
      rateLimits(),
    );
  }

  beforeEach(() => {
    settings = new FakeSettings();
    settings.destinations.set(DESTINATION_ID, destination());
    producer = new FakeProducer();
    client = new FakeClient();
    registry = new Metrics('test');
    metrics = new DispatcherMetrics(registry);
    observer = new BreakerObserver(registry);
    box = new SecretBox(randomBytes(32).toString('base64'));
    now = NOW;
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => warn.mockRestore());

  describe('success', () => {
    it('is delivered when any webhook answers 2xx, producing only its ledger outcome', async () => {
      client.answers.set(URL_1, HTTP_500);
      client.answers.set(URL_2, OK);
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('delivered');
      expect(client.urls()).toEqual([URL_1, URL_2].sort());
      expect(producer.sent).toEqual([]);
      expect(producer.outcomes.map(outcomeDeliveryId)).toEqual([
        deliveryIdFor(DESTINATION_ID, 'm-1'),
      ]);
      expect(producer.outcomes).toEqual([
        {
          messageId: 'm-1',
          sourceId: SOURCE_ID,
          destinationId: DESTINATION_ID,
          type: 'track',
          result: 'delivered',
          lastStatus: 200,
          attempts: 1,
          firstAttemptAt: new Date(NOW).toISOString(),
          at: new Date(NOW).toISOString(),
          webhooks: [
            expect.objectContaining({ webhookId: 'w-1', kind: 'retryable', status: 500 }),
            expect.objectContaining({ webhookId: 'w-2', kind: 'success', status: 200 }),
          ],
        },
      ]);
      expect(await counted(metrics.deliveries, { result: 'delivered' })).toBe(1);
      expect(
        await counted(metrics.destinationDeliveries, {
          destination_id: DESTINATION_ID,
          result: 'delivered',
        }),
      ).toBe(1);
    });

    it('records no success in the ledger with a sample of 0, but every failure', async () => {
      const dispatch = service({ ledgerSuccessSample: 0 });
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('delivered');
      expect(producer.batches).toEqual([]);
      client.answers.set(URL_1, HTTP_404);
      client.answers.set(URL_2, HTTP_404);
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(producer.outcomes.map((o) => o.result)).toEqual(['dead']);
    });

    it('records the success of a delivery that was retried whatever the sample', async () => {
      const dispatch = service({ ledgerSuccessSample: 0 });
      const retry = delivery({ [HEADER.attempt]: '2', [HEADER.firstAttemptAt]: String(NOW - 1) });
      await expect(dispatch.dispatch(retry, 'retry')).resolves.toBe('delivered');
      expect(producer.outcomes.map((o) => [o.result, o.attempts])).toEqual([['delivered', 2]]);
    });

    it("gathers concurrent deliveries' outcomes into one record, resolving each once it is sent", async () => {
      const dispatch = service();
      const ids = ['m-1', 'm-2', 'm-3'];
      await Promise.all(
        ids.map((id) => dispatch.dispatch(delivery({ [HEADER.messageId]: id }), 'main')),
      );
      const records = producer.batches.flat();
      expect(records).toHaveLength(1);
      expect(records[0].key).toBeNull();
      expect(texts(records[0])).toEqual({ [HEADER.outcomeCount]: '3' });
      expect(producer.outcomes.map((o) => o.messageId)).toEqual(ids);
    });

    it('answers the transport at once with the ledger wait, nothing when no outcome is gathered', async () => {
      const answer = (await service().handle(delivery(), 'main')) as DurableLater | undefined;
      expect(answer).toBeInstanceOf(DurableLater);
      expect(producer.outcomes).toEqual([]);
      await expect(answer!.durable).resolves.toBeUndefined();
      expect(producer.outcomes).toHaveLength(1);
      await expect(
        service({ ledgerSuccessSample: 0 }).handle(delivery(), 'main'),
      ).resolves.toBeUndefined();
    });

    it('fails every delivery of an outcome record Kafka did not acknowledge', async () => {
      producer.failure = new Error('broker down');
      const dispatch = service();
      const both = ['m-1', 'm-2'].map((id) =>
        dispatch.dispatch(delivery({ [HEADER.messageId]: id }), 'main'),
      );
      for (const one of both) await expect(one).rejects.toThrow('broker down');
    });

    it('records a sampled share of successes, drawn from the injected randomness', async () => {
      const draws = [0.1, 0.5, 0.29];
      const dispatch = service({ ledgerSuccessSample: 0.3, random: () => draws.shift()! });
      for (let i = 0; i < 3; i += 1) await dispatch.dispatch(delivery(), 'main');
      expect(producer.outcomes).toHaveLength(2);
    });

    it('posts the exact bytes to every webhook at once', async () => {
      await service().dispatch(delivery(), 'main');
      expect(client.posts).toHaveLength(2);
      for (const post of client.posts) expect(post.body).toBe(BODY);
    });

    it("publishes a delete's delivered outcome", async () => {
      await expect(
        service().dispatch(deleteDelivery({ [HEADER.attempt]: '3' }), 'retry'),
      ).resolves.toBe('delivered');
      expect(producer.sent).toEqual([]);
      const [outcome] = producer.batches.flat();
      expect(outcome.topic).toBe(TOPIC.deliveryOutcomes);
      expect(outcome.key).toBe(KEY);
      expect(producer.outcomes).toEqual([
        expect.objectContaining({
          messageId: 'del-1',
          sourceId: SOURCE_ID,
          destinationId: DESTINATION_ID,
          type: 'delete',
          result: 'delivered',
          attempts: 3,
          at: new Date(NOW).toISOString(),
        }),
      ]);
    });
  });

  describe('retryable failures', () => {
    it('sends the delivery to the first tier with every webhook and attempt 2', async () => {
      client.answers.set(URL_1, HTTP_500);
      client.answers.set(URL_2, REFUSED);
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(producer.sent).toHaveLength(1);
      const [retry] = producer.sent;
      expect(retry.topic).toBe(retryTopic(10));
      expect(retry.key).toBe(KEY);
      expect(retry.value).toBe(BODY);
      expect(producer.outcomes).toEqual([
        expect.objectContaining({
          result: 'retrying',
          reason: 'http_5xx',
          attempts: 1,
          nextAttemptAt: new Date(NOW + 10_000).toISOString(),
        }),
      ]);
      expect(texts(retry)).toEqual({
        [HEADER.sourceId]: SOURCE_ID,
        [HEADER.destinationId]: DESTINATION_ID,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: 'm-1',
        [HEADER.attempt]: '2',
        [HEADER.firstAttemptAt]: String(NOW),
        [HEADER.dueAt]: String(NOW + 10_000),
        [HEADER.webhookIds]: 'w-1,w-2',
        [HEADER.reason]: 'http_5xx',
        [HEADER.lastStatus]: '500',
      });
      expect(await counted(metrics.retries, { tier: '10s' })).toBe(1);
      expect(await counted(metrics.deliveries, { result: 'retried' })).toBe(1);
    });

    it('retries only the webhooks that failed in a retryable way', async () => {
      settings.destinations.set(
        DESTINATION_ID,
        destination({
          webhooks: [webhook('w-1', URL_1), webhook('w-2', URL_2), webhook('w-3', URL_3)],
        }),
      );
      client.answers.set(URL_1, HTTP_404);
      client.answers.set(URL_2, REFUSED);
      client.answers.set(URL_3, HTTP_500);
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('retried');
      const [retry] = producer.sent;
      expect(texts(retry)[HEADER.webhookIds]).toBe('w-2,w-3');
      expect(texts(retry)[HEADER.lastStatus]).toBe('404');
    });

    it('moves up the ladder, keeping the first attempt time', async () => {
      client.answers.set(URL_1, HTTP_500);
      client.answers.set(URL_2, HTTP_500);
      const firstAttemptAt = NOW - 70_000;
      const record = delivery({
        [HEADER.attempt]: '3',
        [HEADER.firstAttemptAt]: String(firstAttemptAt),
        [HEADER.webhookIds]: 'w-2',
      });
      await expect(service().dispatch(record, 'retry')).resolves.toBe('retried');
      expect(client.urls()).toEqual([URL_2]);
      const [retry] = producer.sent;
      expect(retry.topic).toBe(retryTopic(300));
      expect(texts(retry)).toMatchObject({
        [HEADER.attempt]: '4',
        [HEADER.firstAttemptAt]: String(firstAttemptAt),
        [HEADER.dueAt]: String(NOW + 300_000),
        [HEADER.webhookIds]: 'w-2',
      });
    });

    it('honours the longest Retry-After by choosing a tier at least that long', async () => {
      client.answers.set(URL_1, { ...HTTP_500, retryAfterMs: 30_000 });
      client.answers.set(URL_2, {
        kind: 'retryable',
        reason: 'http_429',
        status: 429,
        detail: 'HTTP 429',
        retryAfterMs: 90_000,
      });
      await service().dispatch(delivery(), 'main');
      const [retry] = producer.sent;
      expect(retry.topic).toBe(retryTopic(300));
      expect(texts(retry)[HEADER.dueAt]).toBe(String(NOW + 300_000));
    });

    it('is dead when the next attempt would fall after the window', async () => {
      client.answers.set(URL_1, HTTP_500);
      client.answers.set(URL_2, HTTP_500);
      const firstAttemptAt = NOW - WINDOW_MS + 60_000;
      const record = delivery({
        [HEADER.attempt]: '4',
        [HEADER.firstAttemptAt]: String(firstAttemptAt),
        [HEADER.dueAt]: String(NOW),
      });
      await expect(service().dispatch(record, 'retry')).resolves.toBe('dead');
      expect(client.posts).toHaveLength(2);
      expect(producer.sent).toHaveLength(1);
      const [dead] = producer.sent;
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(dead.value).toBe(BODY);
      expect(texts(dead)).toMatchObject({
        [HEADER.reason]: 'retry_window_closed',
        [HEADER.attempt]: '4',
        [HEADER.lastStatus]: '500',
        [HEADER.firstAttemptAt]: String(firstAttemptAt),
        [HEADER.lastAttemptAt]: String(NOW),
      });
      expect(texts(dead)).not.toHaveProperty(HEADER.dueAt);
      expect(await counted(metrics.deadLetters, { reason: 'retry_window_closed' })).toBe(1);
    });
  });

  describe('permanent failures', () => {
    it('is dead with the reason and the last status when every webhook failed for good', async () => {
      client.answers.set(URL_1, HTTP_404);
      client.answers.set(URL_2, {
        kind: 'permanent',
        reason: 'tls_error',
        detail: 'certificate not verified (DEPTH_ZERO_SELF_SIGNED_CERT)',
      });
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(producer.sent).toHaveLength(1);
      const [dead] = producer.sent;
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(dead.key).toBe(KEY);
      expect(dead.value).toBe(BODY);
      expect(texts(dead)).toEqual({
        [HEADER.sourceId]: SOURCE_ID,
        [HEADER.destinationId]: DESTINATION_ID,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: 'm-1',
        [HEADER.reason]: 'http_4xx',
        [HEADER.attempt]: '1',
        [HEADER.firstAttemptAt]: String(NOW),
        [HEADER.lastAttemptAt]: String(NOW),
        [HEADER.lastStatus]: '404',
      });
      expect(await counted(metrics.deliveries, { result: 'dead' })).toBe(1);
    });

    it("produces a delete's dead outcome together with its dead record", async () => {
      client.answers.set(URL_1, HTTP_404);
      client.answers.set(URL_2, HTTP_404);
      await expect(service().dispatch(deleteDelivery(), 'main')).resolves.toBe('dead');
      expect(producer.batches).toHaveLength(1);
      const [dead, outcome] = producer.batches[0];
      expect(producer.batches[0]).toHaveLength(2);
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(dead.value).toBe(DELETE_BODY);
      expect(outcome.topic).toBe(TOPIC.deliveryOutcomes);
      expect(outcome.key).toBe(KEY);
      expect(parseDeliveryOutcome(outcome.value)).toMatchObject({
        messageId: 'del-1',
        sourceId: SOURCE_ID,
        destinationId: DESTINATION_ID,
        type: 'delete',
        result: 'dead',
        reason: 'http_4xx',
        lastStatus: 404,
        attempts: 1,
        at: new Date(NOW).toISOString(),
      });
    });

    it('is dead without a POST when every webhook the retry covered was removed', async () => {
      const record = delivery({
        [HEADER.attempt]: '2',
        [HEADER.firstAttemptAt]: String(NOW - 10_000),
        [HEADER.webhookIds]: 'w-9,w-8',
      });
      await expect(service().dispatch(record, 'retry')).resolves.toBe('dead');
      expect(client.posts).toEqual([]);
      const [dead] = producer.sent;
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(texts(dead)).toMatchObject({
        [HEADER.reason]: 'webhooks_removed',
        [HEADER.attempt]: '1',
        [HEADER.firstAttemptAt]: String(NOW - 10_000),
      });
    });

    it('dead-letters a record without a destination id', async () => {
      const record = delivery({ [HEADER.destinationId]: undefined });
      await expect(service().dispatch(record, 'main')).resolves.toBe('dead');
      expect(client.posts).toEqual([]);
      const [dead] = producer.sent;
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(texts(dead)).toMatchObject({
        [HEADER.reason]: 'missing_destination_id',
        [HEADER.attempt]: '0',
      });
    });
  });

  describe('settings read when sending', () => {
    it.each([
      ['deleted', undefined],
      ['disabled', destination({ enabled: false })],
    ])('discards the delivery of a %s destination, recording why', async (state, current) => {
      if (current) settings.destinations.set(DESTINATION_ID, current);
      else settings.destinations.clear();
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('discarded');
      expect(client.posts).toEqual([]);
      expect(producer.sent).toEqual([]);
      expect(producer.outcomes).toEqual([
        expect.objectContaining({ result: 'discarded', reason: `destination_${state}` }),
      ]);
      expect(await counted(metrics.discarded, { reason: `destination_${state}` })).toBe(1);
      expect(await counted(metrics.deliveries, { result: 'discarded' })).toBe(1);
    });

    it("publishes a discarded delete's outcome", async () => {
      settings.destinations.set(DESTINATION_ID, destination({ enabled: false }));
      await expect(
        service().dispatch(deleteDelivery({ [HEADER.attempt]: '2' }), 'retry'),
      ).resolves.toBe('discarded');
      expect(client.posts).toEqual([]);
      expect(producer.outcomes).toHaveLength(1);
      expect(producer.outcomes[0]).toMatchObject({
        messageId: 'del-1',
        type: 'delete',
        result: 'discarded',
        reason: 'destination_disabled',
        attempts: 1,
      });
    });

    it('posts an edited webhook at its new URL, and skips one added since the retry began', async () => {
      settings.destinations.set(
        DESTINATION_ID,
        destination({
          webhooks: [
            webhook('w-1', URL_1),
            webhook('w-2', 'https://two.example/fixed'),
            webhook('w-3', URL_3),
          ],
        }),
      );
      const record = delivery({ [HEADER.attempt]: '2', [HEADER.webhookIds]: 'w-2' });
      await expect(service().dispatch(record, 'retry')).resolves.toBe('delivered');
      expect(client.urls()).toEqual(['https://two.example/fixed']);
    });
  });

  describe('headers', () => {
    it('signs the exact bytes with the shared secret', async () => {
      const secret = 'shh-ünïcode-secret';
      settings.destinations.set(
        DESTINATION_ID,
        destination({ sharedSecretCiphertext: box.seal(secret) }),
      );
      await service().dispatch(delivery(), 'main');
      const expected = createHmac('sha1', Buffer.from(secret, 'utf8')).update(BODY).digest('hex');
      expect(client.posts).toHaveLength(2);
      for (const post of client.posts) {
        expect(post.headers['x-signature']).toBe(expected);
        expect(post.headers['content-type']).toBe('application/json');
        expect(post.headers['user-agent']).toBe('Sluice/1.0');
      }
    });

    it('sends no signature without a shared secret', async () => {
      await service().dispatch(delivery(), 'main');
      for (const post of client.posts) expect(post.headers).not.toHaveProperty('x-signature');
    });

    it("sends each webhook's static headers, which cannot replace Sluice's own", async () => {
      settings.destinations.set(
        DESTINATION_ID,
        destination({
          webhooks: [
            webhook('w-1', URL_1, {
              authorization: box.sealText('Bearer one'),
              'user-agent': box.sealText('Other/9'),
            }),
            webhook('w-2', URL_2, { 'x-team': box.sealText('two') }),
          ],
        }),
      );
      await service().dispatch(delivery(), 'main');
      const byUrl = new Map(client.posts.map((p) => [p.url, p.headers]));
      expect(byUrl.get(URL_1)).toEqual({
        authorization: 'Bearer one',
        'user-agent': 'Sluice/1.0',
        'content-type': 'application/json',
      });
      expect(byUrl.get(URL_2)).toEqual({
        'x-team': 'two',
        'user-agent': 'Sluice/1.0',
        'content-type': 'application/json',
      });
    });

    it('dead-letters a delivery whose shared secret does not open, posting nothing', async () => {
      const other = new SecretBox(randomBytes(32).toString('base64'));
      settings.destinations.set(
        DESTINATION_ID,
        destination({ sharedSecretCiphertext: other.seal('x') }),
      );
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(client.posts).toEqual([]);
      const [dead] = producer.sent;
      expect(dead.topic).toBe(TOPIC.deliveriesDead);
      expect(dead.headers?.[HEADER.reason]).toBe('secret_unreadable');
      expect(JSON.stringify(dead.headers)).not.toContain('x');
    });

    it('dead-letters a delivery whose static header value does not open, posting nothing', async () => {
      const other = new SecretBox(randomBytes(32).toString('base64'));
      settings.destinations.set(
        DESTINATION_ID,
        destination({
          webhooks: [
            webhook('w-1', URL_1, { authorization: box.sealText('Bearer one') }),
            webhook('w-2', URL_2, { authorization: other.sealText('Bearer two') }),
          ],
        }),
      );
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(client.posts).toEqual([]);
      const [dead] = producer.sent;
      expect(dead.headers?.[HEADER.reason]).toBe('secret_unreadable');
      expect(JSON.stringify(dead.headers)).not.toContain('Bearer');
    });
  });

  describe('signature modes and rotation', () => {
    const OLD = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const NEW = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    const hex = (secret: string) =>
      createHmac('sha1', Buffer.from(secret, 'utf8')).update(BODY).digest('hex');
    const v1 = (secret: string, id: string, seconds: number) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const mac = createHmac('sha256', key).update(`${id}.${seconds}.`).update(BODY);
      return `v1,${mac.digest('base64')}`;
    };

    /** A destination rotated from OLD to NEW, the overlap ending 60 s after NOW. */
    function rotated(mode: 'x-signature' | 'standard-webhooks'): DestinationSettings {
      return destination({
        signatureMode: mode,
        sharedSecretCiphertext: box.seal(NEW),
        previousSecretCiphertext: box.seal(OLD),
        previousSecretExpiresAt: NOW + 60_000,
      });
    }

    it.each([
      ['during the overlap', 0, { 'x-signature': 'OLD', 'x-signature-next': 'NEW' }],
      ['at its end and after', 60_000, { 'x-signature': 'NEW' }],
    ])('x-signature %s', async (_name, laterMs, expected) => {
      settings.destinations.set(DESTINATION_ID, rotated('x-signature'));
      now = NOW + laterMs;
      await service().dispatch(delivery(), 'main');
      const byName = { OLD: hex(OLD), NEW: hex(NEW) };
      const signatures = Object.fromEntries(
        Object.entries(expected).map(([name, which]) => [name, byName[which as 'OLD' | 'NEW']]),
      );
      for (const post of client.posts) {
        const signed = Object.keys(post.headers).filter((name) => name.startsWith('x-signature'));
        expect(Object.fromEntries(signed.map((name) => [name, post.headers[name]]))).toEqual(
          signatures,
        );
      }
    });

    it.each([
      ['during the overlap: both, the new one first', 0, ['NEW', 'OLD']],
      ['after it: the new one only', 61_000, ['NEW']],
    ])('standard-webhooks %s', async (_name, laterMs, which) => {
      settings.destinations.set(DESTINATION_ID, rotated('standard-webhooks'));
      now = NOW + laterMs;
      await service().dispatch(delivery(), 'main');
      const seconds = Math.floor(now / 1000);
      const secrets = { OLD, NEW };
      const expected = which.map((w) => v1(secrets[w as 'OLD' | 'NEW'], 'm-1', seconds));
      expect(client.posts).toHaveLength(2);
      for (const post of client.posts) {
        expect(post.headers['webhook-id']).toBe('m-1');
        expect(post.headers['webhook-timestamp']).toBe(String(seconds));
        expect(post.headers['webhook-signature']).toBe(expected.join(' '));
        expect(post.headers).not.toHaveProperty('x-signature');
      }
    });

    it('dead-letters a standard-webhooks delivery whose secret is not whsec_, posting nothing', async () => {
      settings.destinations.set(
        DESTINATION_ID,
        destination({
          signatureMode: 'standard-webhooks',
          sharedSecretCiphertext: box.seal('plain'),
        }),
      );
      await expect(service().dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(client.posts).toEqual([]);
      expect(producer.sent[0].headers?.[HEADER.reason]).toBe('secret_not_whsec');
      // Neither the dead letter nor a log line carries the secret.
      expect(JSON.stringify([producer.sent, warn.mock.calls])).not.toContain('plain');
    });
  });

  describe("a destination's circuit breaker", () => {
    const OTHER_ID = '33333333-3333-4333-8333-333333333333';

    function failEverything(): void {
      client.answers.set(URL_1, HTTP_500);
      client.answers.set(URL_2, HTTP_500);
    }

    /** Two failed deliveries: the breaker opens at `NOW`. */
    async function opened(): Promise<DispatchService> {
      failEverything();
      const dispatch = service();
      await dispatch.dispatch(delivery({ [HEADER.messageId]: 'm-1' }), 'main');
      await dispatch.dispatch(delivery({ [HEADER.messageId]: 'm-2' }), 'main');
      return dispatch;
    }

    it('sends new main deliveries to the tier after the probe time, without a POST', async () => {
      const dispatch = await opened();
      expect(client.posts).toHaveLength(4);
      now = NOW + 1_000;
      await expect(
        dispatch.dispatch(delivery({ [HEADER.messageId]: 'm-3' }), 'main'),
      ).resolves.toBe('retried');
      expect(client.posts).toHaveLength(4);
      const waiting = producer.sent[2];
      expect(waiting.topic).toBe(retryTopic(60));
      expect(waiting.value).toBe(BODY);
      expect(texts(waiting)).toEqual({
        [HEADER.sourceId]: SOURCE_ID,
        [HEADER.destinationId]: DESTINATION_ID,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: 'm-3',
        [HEADER.attempt]: '1',
        [HEADER.firstAttemptAt]: String(NOW + 1_000),
        [HEADER.dueAt]: String(NOW + 61_000),
        [HEADER.reason]: 'breaker_open',
      });
    });

    it('holds deliveries of the retry tiers too, keeping their attempt count', async () => {
      const dispatch = await opened();
      const retry = delivery({ [HEADER.attempt]: '3', [HEADER.firstAttemptAt]: String(NOW) });
      await expect(dispatch.dispatch(retry, 'retry')).resolves.toBe('retried');
      expect(client.posts).toHaveLength(4);
      expect(texts(producer.sent[2])[HEADER.attempt]).toBe('3');
      expect(texts(producer.sent[2])[HEADER.reason]).toBe('breaker_open');
    });

    it('is not open before the configured count', async () => {
      failEverything();
      const dispatch = service({ breaker: { ...BREAKER, failingAfter: 3 } });
      await dispatch.dispatch(delivery(), 'main');
      await dispatch.dispatch(delivery(), 'main');
      await dispatch.dispatch(delivery(), 'main');
      expect(client.posts).toHaveLength(6);
    });

    it('probes once after the cool-down; a success closes it', async () => {
      const dispatch = await opened();
      client.answers.clear();
      now = NOW + 30_000;
      const retry = delivery({ [HEADER.attempt]: '2', [HEADER.firstAttemptAt]: String(NOW) });
      await expect(dispatch.dispatch(retry, 'retry')).resolves.toBe('delivered');
      expect(client.posts).toHaveLength(6);
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('delivered');
      expect(client.posts).toHaveLength(8);
    });

    it('lets one probe out at a time; the others wait for it', async () => {
      const dispatch = await opened();
      let answer!: (result: AttemptResult) => void;
      client.held.set(URL_1, new Promise((resolve) => (answer = resolve)));
      client.held.set(URL_2, Promise.resolve(HTTP_500));
      now = NOW + 30_000;
      const probe = dispatch.dispatch(delivery(), 'main');
      await settle();
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(client.posts).toHaveLength(6);
      answer(OK);
      await expect(probe).resolves.toBe('delivered');
    });

    it('opens again for a cool-down when the probe fails', async () => {
      const dispatch = await opened();
      now = NOW + 30_000;
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(client.posts).toHaveLength(6);
      now = NOW + 59_000;
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(client.posts).toHaveLength(6);
      now = NOW + 60_000;
      await dispatch.dispatch(delivery(), 'main');
      expect(client.posts).toHaveLength(8);
    });

    it('keeps other destinations flowing', async () => {
      settings.destinations.set(
        OTHER_ID,
        destination({ id: OTHER_ID, webhooks: [webhook('w-5', URL_3)] }),
      );
      const dispatch = await opened();
      const other = delivery({ [HEADER.destinationId]: OTHER_ID });
      await expect(dispatch.dispatch(other, 'main')).resolves.toBe('delivered');
      expect(client.posts.map((p) => p.url).pop()).toBe(URL_3);
    });

    it('does not count permanent answers as failures', async () => {
      client.answers.set(URL_1, HTTP_404);
      client.answers.set(URL_2, HTTP_404);
      const dispatch = service({ breaker: { ...BREAKER, failingAfter: 1 } });
      await dispatch.dispatch(delivery(), 'main');
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('dead');
      expect(client.posts).toHaveLength(4);
    });

    it('shows each change in the gauge, the counter and the log (warn when it opens)', async () => {
      await opened();
      const series = async (name: string): Promise<string> =>
        (await registry.registry.getSingleMetricAsString(name))
          .split('\n')
          .filter((line) => line.includes(DESTINATION_ID))
          .join('\n');
      await expect(series('sluice_dispatcher_breaker_state')).resolves.toContain('} 2');
      await expect(series('sluice_dispatcher_breaker_transitions_total')).resolves.toContain(
        'to="open"',
      );
      expect(warn).toHaveBeenCalledWith(
        `breaker of destination ${DESTINATION_ID}: closed -> open (consecutive_failures)`,
      );
    });
  });

  describe('bounds', () => {
    const OTHER_ID = '33333333-3333-4333-8333-333333333333';
    const SLOW_URL = 'https://slow.example/hook';

    beforeEach(() => {
      settings.destinations.set(
        DESTINATION_ID,
        destination({ webhooks: [webhook('w-1', SLOW_URL)] }),
      );
      settings.destinations.set(
        OTHER_ID,
        destination({ id: OTHER_ID, webhooks: [webhook('w-5', URL_3)] }),
      );
    });

    /** A dispatch whose destinations have one slot each, waited for up to `destinationWaitMs`. */
    function oneSlotService(destinationWaitMs: number): DispatchService {
      return service({ maxInFlight: 8, maxInFlightPerDestination: 1, destinationWaitMs });
    }

    function holdSlowUrl(): () => void {
      let answer!: (result: AttemptResult) => void;
      client.held.set(SLOW_URL, new Promise((resolve) => (answer = resolve)));
      return () => {
        client.held.delete(SLOW_URL);
        answer(OK);
      };
    }

    it("sends a main-topic delivery still past its destination's bound after the wait to the first tier", async () => {
      const release = holdSlowUrl();
      const dispatch = oneSlotService(50);
      const first = dispatch.dispatch(delivery(), 'main');
      await settle();
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(client.urls()).toEqual([SLOW_URL]);
      const [busy] = producer.sent;
      expect(busy.topic).toBe(retryTopic(10));
      expect(busy.headers?.[HEADER.reason]).toBe('destination_busy');
      expect(busy.headers?.[HEADER.attempt]).toBe('1');
      release();
      await expect(first).resolves.toBe('delivered');
    });

    it('lets a main-topic delivery take a slot freed within the wait', async () => {
      const release = holdSlowUrl();
      const dispatch = oneSlotService(5_000);
      const first = dispatch.dispatch(delivery(), 'main');
      const second = dispatch.dispatch(delivery(), 'main');
      await settle();
      expect(client.urls()).toEqual([SLOW_URL]);
      release();
      await expect(first).resolves.toBe('delivered');
      await expect(second).resolves.toBe('delivered');
      expect(producer.sent).toEqual([]);
    });

    it('sends a main-topic delivery on at once when its destination has finished nothing for the wait', async () => {
      const release = holdSlowUrl();
      const dispatch = oneSlotService(60_000);
      const first = dispatch.dispatch(delivery(), 'main');
      await settle();
      now += 60_000;
      // Without the rule this would wait a minute of real time for the slot.
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      expect(producer.sent[0].headers?.[HEADER.reason]).toBe('destination_busy');
      release();
      await expect(first).resolves.toBe('delivered');
    });

    it("holds a retry tier's deliveries past the destination's bound until one finishes", async () => {
      const release = holdSlowUrl();
      const dispatch = service({ maxInFlight: 8, maxInFlightPerDestination: 1 });
      const first = dispatch.dispatch(delivery(), 'retry');
      const second = dispatch.dispatch(delivery(), 'retry');
      await settle();
      expect(client.urls()).toEqual([SLOW_URL]);
      release();
      await expect(first).resolves.toBe('delivered');
      await expect(second).resolves.toBe('delivered');
      expect(client.urls()).toEqual([SLOW_URL, SLOW_URL]);
    });

    it("does not let one slow destination's queue hold up another destination", async () => {
      const release = holdSlowUrl();
      const dispatch = service({ maxInFlight: 2, maxInFlightPerDestination: 1 });
      const slow = [dispatch.dispatch(delivery(), 'main'), dispatch.dispatch(delivery(), 'main')];
      await settle();
      const other = dispatch.dispatch(delivery({ [HEADER.destinationId]: OTHER_ID }), 'main');
      await settle();
      try {
        // The other destination has a free slot of its own, and only one request is in flight.
        expect(client.urls()).toEqual([URL_3, SLOW_URL].sort());
      } finally {
        release();
        await Promise.all([...slow, other]);
      }
    });
  });

  describe('rate limit', () => {
    it('sends a main-topic delivery without a token on to the first tier, posting nothing', async () => {
      settings.destinations.set(DESTINATION_ID, destination({ rateLimitPerSecond: 1 }));
      const dispatch = service();
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('delivered');
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('retried');
      // The first delivery's POSTs to its two webhooks, nothing of the second.
      expect(client.posts).toHaveLength(2);
      const [limited] = producer.sent;
      expect(limited.topic).toBe(retryTopic(10));
      expect(limited.headers?.[HEADER.reason]).toBe('rate_limited');
      expect(limited.headers?.[HEADER.attempt]).toBe('1');
    });

    it('posts every delivery of a destination without a limit', async () => {
      const dispatch = service();
      for (let i = 0; i < 5; i += 1) {
        await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('delivered');
      }
      expect(client.posts).toHaveLength(10);
    });

    it("makes a retry tier's delivery wait for its token, then posts it", async () => {
      settings.destinations.set(DESTINATION_ID, destination({ rateLimitPerSecond: 1 }));
      const dispatch = service();
      await expect(dispatch.dispatch(delivery(), 'main')).resolves.toBe('delivered');
      const retried = dispatch.dispatch(delivery(), 'retry');
      await settle();
      expect(client.posts).toHaveLength(2);
      // A token a second, less the headroom: one each 1,053 ms.
      now += 1_100;
      await expect(retried).resolves.toBe('delivered');
      expect(client.posts).toHaveLength(4);
    });
  });

  it.each([
    ['a single-call', { webhooks: [webhook('w-1', URL_1)] }],
    [
      'a batching',
      {
        webhooks: [webhook('w-1', URL_1)],
        batching: { maxCalls: 3, maxBytes: 1_048_576, maxWaitMs: 1 },
      },
    ],
  ])("reads %s destination's settings once before its attempt", async (_, overrides) => {
    settings.destinations.set(DESTINATION_ID, destination(overrides));
    const read = jest.spyOn(settings, 'destination');
    const answer = service().handle(delivery(), 'main');
    expect(read).toHaveBeenCalledTimes(1);
    const later = answer instanceof DurableLater ? answer : await answer;
    await expect((later as DurableLater).durable).resolves.toBeUndefined();
    expect(client.posts).toHaveLength(1);
  });

  it('logs a timeout with the message, destination, webhook and attempt', async () => {
    client.answers.set(URL_1, {
      kind: 'retryable',
      reason: 'timeout',
      detail: 'no answer in 5000 ms',
    });
    client.answers.set(URL_2, HTTP_404);
    await service().dispatch(delivery({ [HEADER.attempt]: '2' }), 'retry');
    const lines = warn.mock.calls.map(([message]) => String(message));
    const timeout = lines.find((line) => line.includes('timeout'));
    expect(timeout).toBeDefined();
    for (const part of ['m-1', DESTINATION_ID, 'w-1', 'attempt 2']) expect(timeout).toContain(part);
  });

  it('rejects when the retry record was not acknowledged', async () => {
    client.answers.set(URL_1, HTTP_500);
    client.answers.set(URL_2, HTTP_500);
    producer.failure = new Error('broker down');
    await expect(service().dispatch(delivery(), 'main')).rejects.toThrow('broker down');
  });

  describe('batched delivery', () => {
    const BATCHING = { maxCalls: 3, maxBytes: 1_048_576, maxWaitMs: 60_000 };

    /** A batching destination with one webhook (and a secret, when given). */
    function batching(overrides: Partial<DestinationSettings> = {}): void {
      settings.destinations.set(
        DESTINATION_ID,
        destination({ webhooks: [webhook('w-1', URL_1)], batching: BATCHING, ...overrides }),
      );
    }

    /** The nth call of a batch: its own message id, offset and body. */
    function call(n: number, headers: Record<string, string> = {}): IncomingRecord {
      const body = Buffer.from(`{"type":"track","messageId":"m-${n}","event":"E ${n}"}`);
      const record = delivery({ [HEADER.messageId]: `m-${n}`, ...headers }, body);
      return { ...record, offset: String(n) };
    }

    it('sends a full batch as one JSON array of the exact bodies, signed as a whole', async () => {
      const secret = 'batch-secret';
      batching({ sharedSecretCiphertext: box.seal(secret) });
      const dispatch = service();
      const results = [1, 2, 3].map((n) => dispatch.dispatch(call(n), 'main'));
      await expect(Promise.all(results)).resolves.toEqual(['delivered', 'delivered', 'delivered']);
      expect(client.posts).toHaveLength(1);
      const [post] = client.posts;
      const bodies = [1, 2, 3].map((n) => call(n).value!.toString());
      expect(post.body.toString()).toBe(`[${bodies.join(',')}]`);
      expect(JSON.parse(post.body.toString())).toHaveLength(3);
      const expected = createHmac('sha1', secret).update(post.body).digest('hex');
      expect(post.headers['x-signature']).toBe(expected);
      const batchId = post.headers['x-sluice-batch-id'];
      expect(batchId).toMatch(/^[0-9a-f-]{36}$/);
      expect(producer.outcomes.map((o) => [o.messageId, o.result, o.batchId])).toEqual([
        ['m-1', 'delivered', batchId],
        ['m-2', 'delivered', batchId],
        ['m-3', 'delivered', batchId],
      ]);
      await expect(counted(metrics.batches, { result: 'delivered' })).resolves.toBe(1);
      await expect(counted(metrics.batchedCalls, {})).resolves.toBe(3);
      // Counted once a batch, as every call.
      await expect(counted(metrics.deliveries, { result: 'delivered' })).resolves.toBe(3);
      const byDestination = { destination_id: DESTINATION_ID, result: 'delivered' };
      await expect(counted(metrics.destinationDeliveries, byDestination)).resolves.toBe(3);
    });

    it('sends a batch not yet full once its first call waited maxWaitMs', async () => {
      batching({ batching: { ...BATCHING, maxWaitMs: 1 } });
      await expect(service().dispatch(call(1), 'main')).resolves.toBe('delivered');
      expect(client.posts).toHaveLength(1);
      expect(JSON.parse(client.posts[0].body.toString())).toHaveLength(1);
    });

    it('starts a new batch when the next call would pass maxBytes', async () => {
      const size = call(1).value!.length;
      // Room for two calls' array, not three.
      batching({ batching: { ...BATCHING, maxBytes: 2 * size + 3, maxWaitMs: 1 } });
      const dispatch = service();
      const results = [1, 2, 3].map((n) => dispatch.dispatch(call(n), 'main'));
      await expect(Promise.all(results)).resolves.toHaveLength(3);
      const sizes = client.posts.map((p) => (JSON.parse(p.body.toString()) as unknown[]).length);
      expect(sizes).toEqual([2, 1]);
    });

    it('retries a failed batch call by call, each on its tier with its own record', async () => {
      batching();
      client.answers.set(URL_1, HTTP_500);
      const dispatch = service();
      const results = [1, 2, 3].map((n) => dispatch.dispatch(call(n), 'main'));
      await expect(Promise.all(results)).resolves.toEqual(['retried', 'retried', 'retried']);
      expect(client.posts).toHaveLength(1);
      expect(producer.sent.map((r) => [r.topic, texts(r)[HEADER.messageId]])).toEqual([
        [retryTopic(10), 'm-1'],
        [retryTopic(10), 'm-2'],
        [retryTopic(10), 'm-3'],
      ]);
      const batchId = client.posts[0].headers['x-sluice-batch-id'];
      expect(producer.outcomes.every((o) => o.result === 'retrying' && o.batchId === batchId)).toBe(
        true,
      );
    });

    it('forms the calls of a retry subset apart from those covering every webhook', async () => {
      batching({
        batching: { ...BATCHING, maxWaitMs: 1 },
        webhooks: [webhook('w-1', URL_1), webhook('w-2', URL_2)],
      });
      const dispatch = service();
      const results = [
        dispatch.dispatch(call(1), 'main'),
        dispatch.dispatch(call(2, { [HEADER.attempt]: '2', [HEADER.webhookIds]: 'w-2' }), 'retry'),
      ];
      await expect(Promise.all(results)).resolves.toEqual(['delivered', 'delivered']);
      expect(client.urls()).toEqual([URL_1, URL_2, URL_2]);
    });

    it('logs a batch whose calls all died as one warning with their count', async () => {
      batching();
      client.answers.set(URL_1, HTTP_404);
      const dispatch = service();
      const results = [1, 2, 3].map((n) => dispatch.dispatch(call(n), 'main'));
      await expect(Promise.all(results)).resolves.toEqual(['dead', 'dead', 'dead']);
      const lines = warn.mock.calls.map(([line]) => String(line));
      const dead = lines.filter((line) => line.includes('dead after'));
      expect(dead).toEqual([
        expect.stringMatching(
          /^3 call\(s\) of batch [0-9a-f-]{36} to destination .*: dead after 1 attempt\(s\): http_4xx$/,
        ),
      ]);
      await expect(counted(metrics.deadLetters, { reason: 'http_4xx' })).resolves.toBe(3);
      const byDestination = { destination_id: DESTINATION_ID, result: 'dead' };
      await expect(counted(metrics.destinationDeliveries, byDestination)).resolves.toBe(3);
    });

    it('discards every call when the destination was disabled before the batch went', async () => {
      batching({ batching: { ...BATCHING, maxWaitMs: 1 } });
      const dispatch = service();
      const results = [1, 2].map((n) => dispatch.dispatch(call(n), 'main'));
      settings.destinations.set(DESTINATION_ID, destination({ enabled: false }));
      await expect(Promise.all(results)).resolves.toEqual(['discarded', 'discarded']);
      expect(client.posts).toHaveLength(0);
    });

    it('fails every call of a batch whose retry records Kafka refused', async () => {
      batching();
      client.answers.set(URL_1, HTTP_500);
      producer.failure = new Error('broker down');
      const dispatch = service();
      const results = [1, 2, 3].map((n) => dispatch.dispatch(call(n), 'main'));
      for (const result of results) await expect(result).rejects.toThrow('broker down');
    });

    it('answers the transport at once with a wait that holds the offset until the answer', async () => {
      batching();
      const dispatch = service();
      // Not in a promise: the call takes no turn of its own in the partition's pipeline.
      const answer = dispatch.handle(call(1), 'main') as DurableLater;
      expect(answer).toBeInstanceOf(DurableLater);
      let durable = false;
      void answer.durable.then(() => (durable = true));
      await settle();
      expect(durable).toBe(false);
      for (const n of [2, 3]) expect(dispatch.handle(call(n), 'main')).toBe(answer);
      await answer.durable;
      expect(client.posts).toHaveLength(1);
    });

    it('past its bound of pending calls, answers a call that keeps its slot until the answer', async () => {
      batching();
      const dispatch = service({ maxPendingCalls: 2 });
      const answer = dispatch.handle(call(1), 'main') as DurableLater;
      expect(dispatch.handle(call(2), 'main')).toBe(answer);
      const third = dispatch.handle(call(3), 'main');
      expect(third).not.toBeInstanceOf(DurableLater);
      expect(dispatch.pending.size).toBe(2);
      let answered = false;
      void (third as Promise<unknown>).then(() => (answered = true));
      await settle();
      expect(answered).toBe(false);
      await answer.durable;
      await expect(third).resolves.toBeUndefined();
      expect(client.posts).toHaveLength(1);
      expect(dispatch.pending.size).toBe(0);
      const pendingGauge = async () => (await metrics.pendingCalls.get()).values[0]?.value;
      await expect(pendingGauge()).resolves.toBe(0);
      expect(dispatch.handle(call(4), 'main')).toBeInstanceOf(DurableLater);
      await expect(pendingGauge()).resolves.toBe(1);
    });
  });
});
