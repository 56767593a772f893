import {
  deliveryIdFor,
  HEADER,
  outcomeDeliveryId,
  parseDeliveryOutcome,
  retryTopic,
  TOPIC,
} from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import {
  deadRecord,
  decodeDelivery,
  DeliveryFacts,
  outcomeJson,
  outcomeRecord,
  retryRecord,
  str,
} from './delivery-record';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const KEY = Buffer.from(`${DESTINATION_ID}:u-1`);
const VALUE = Buffer.from('{"version":1,"type":"track","userId":"u-1","event":"E"}');

/** A delivery record as the router produces it, with header overrides (undefined removes). */
function record(
  headers: Record<string, string | undefined> = {},
  fields: Partial<Pick<IncomingRecord, 'key' | 'value'>> = {},
): IncomingRecord {
  const all: Record<string, string | undefined> = {
    [HEADER.sourceId]: SOURCE_ID,
    [HEADER.destinationId]: DESTINATION_ID,
    [HEADER.callType]: 'track',
    [HEADER.messageId]: 'm-1',
    ...headers,
  };
  return {
    topic: TOPIC.deliveries,
    partition: 2,
    offset: '9',
    key: KEY,
    value: VALUE,
    headers: Object.fromEntries(
      Object.entries(all).map(([name, text]) => [
        name,
        text === undefined ? undefined : Buffer.from(text),
      ]),
    ),
    timestamp: 1_000,
    ...fields,
  };
}

/** An outgoing record's headers as text. */
function texts(
  headers: Readonly<Record<string, string | Buffer>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name, value.toString()]),
  );
}

const DELIVERY_ID = deliveryIdFor(DESTINATION_ID, 'm-1');

function facts(overrides: Partial<DeliveryFacts> = {}): DeliveryFacts {
  return {
    deliveryId: DELIVERY_ID,
    destinationId: DESTINATION_ID,
    sourceId: SOURCE_ID,
    type: 'delete',
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

describe(decodeDelivery.name, () => {
  it('reads a first delivery with its defaults, keeping the value as is', () => {
    const decoded = decodeDelivery(record());
    expect(decoded).toEqual({
      kind: 'delivery',
      body: VALUE,
      facts: {
        deliveryId: undefined,
        destinationId: DESTINATION_ID,
        sourceId: SOURCE_ID,
        type: 'track',
        messageId: 'm-1',
        event: undefined,
        replayOf: undefined,
        attempt: 1,
        firstAttemptAt: undefined,
        webhookIds: undefined,
      },
    });
    expect(decoded.kind === 'delivery' && decoded.body).toBe(VALUE);
  });

  it("reads a retry's attempt, first attempt and webhook ids", () => {
    const decoded = decodeDelivery(
      record({
        [HEADER.attempt]: '3',
        [HEADER.firstAttemptAt]: '1700000000000',
        [HEADER.webhookIds]: 'w-1,w-3',
      }),
    );
    expect(decoded).toMatchObject({
      kind: 'delivery',
      facts: { attempt: 3, firstAttemptAt: 1_700_000_000_000, webhookIds: ['w-1', 'w-3'] },
    });
  });

  it("reads a replay's own delivery id, the delivery it repeats and the event", () => {
    const decoded = decodeDelivery(
      record({
        [HEADER.deliveryId]: 'd-new',
        [HEADER.replayOf]: 'd-old',
        [HEADER.event]: 'Order Completed',
        [HEADER.userId]: 'u-1',
        [HEADER.anonymousId]: 'a-1',
      }),
    );
    expect(decoded).toMatchObject({
      facts: {
        deliveryId: 'd-new',
        replayOf: 'd-old',
        event: 'Order Completed',
        userId: 'u-1',
        anonymousId: 'a-1',
      },
    });
  });

  it('leaves the id of a delivery without one to the ledger: one per destination and message', () => {
    const now = Date.parse('2030-01-01T00:00:00.000Z');
    const outcomeOf = (d: ReturnType<typeof decodeDelivery>) =>
      d.kind === 'delivery'
        ? parseDeliveryOutcome(
            outcomeJson(d.facts, { kind: 'delivered', attempts: 1 }, undefined, now),
          )
        : undefined;
    const first = outcomeOf(decodeDelivery(record()));
    const retry = outcomeOf(decodeDelivery(record({ [HEADER.attempt]: '4' })));
    const other = outcomeOf(decodeDelivery(record({ [HEADER.messageId]: 'm-2' })));
    expect(first?.deliveryId).toBeUndefined();
    const id = (o: typeof first) => (o ? outcomeDeliveryId(o) : '');
    expect(id(retry)).toBe(id(first));
    expect(id(other)).not.toBe(id(first));
    expect(id(first)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('reads an empty webhook id list as covering none', () => {
    expect(decodeDelivery(record({ [HEADER.webhookIds]: '' }))).toMatchObject({
      facts: { webhookIds: [] },
    });
  });

  it.each(['0', '-2', '1.5', 'two'])('reads attempt %s as the first', (attempt) => {
    expect(decodeDelivery(record({ [HEADER.attempt]: attempt }))).toMatchObject({
      facts: { attempt: 1 },
    });
  });

  it.each(['0', '-5', 'yesterday', ''])('reads first-attempt %j as none', (at) => {
    expect(decodeDelivery(record({ [HEADER.firstAttemptAt]: at }))).toMatchObject({
      facts: { firstAttemptAt: undefined },
    });
  });

  it('leaves optional facts undefined when their headers are absent', () => {
    expect(
      decodeDelivery(
        record({
          [HEADER.sourceId]: undefined,
          [HEADER.callType]: undefined,
          [HEADER.messageId]: undefined,
        }),
      ),
    ).toMatchObject({
      facts: { sourceId: undefined, type: undefined, messageId: undefined },
    });
  });

  it('refuses a record without a destination id', () => {
    expect(decodeDelivery(record({ [HEADER.destinationId]: undefined }))).toEqual({
      kind: 'invalid',
      reason: 'missing_destination_id',
    });
    expect(decodeDelivery(record({ [HEADER.destinationId]: '' }))).toEqual({
      kind: 'invalid',
      reason: 'missing_destination_id',
    });
  });

  it('refuses a record without a value', () => {
    expect(decodeDelivery(record({}, { value: null }))).toEqual({
      kind: 'invalid',
      reason: 'missing_value',
    });
    expect(decodeDelivery(record({}, { value: Buffer.alloc(0) }))).toEqual({
      kind: 'invalid',
      reason: 'missing_value',
    });
  });
});

describe(retryRecord.name, () => {
  const SCHEDULE = {
    delaySeconds: 60,
    attempt: 2,
    firstAttemptAt: 1_700_000_000_000,
    dueAt: 1_700_000_060_000,
    webhookIds: ['w-2', 'w-3'],
    reason: 'http_5xx',
    lastStatus: 503,
  };

  it('puts the same key and bytes on the tier of the delay, with headers saying when', () => {
    const incoming = record({ [HEADER.integrations]: '{"Webhooks":true}' });
    const retry = retryRecord(incoming, SCHEDULE);
    expect(retry.topic).toBe(retryTopic(60));
    expect(retry.topic).toBe('sluice.deliveries.retry.1m.v1');
    expect(retry.key).toBe(KEY);
    expect(retry.value).toBe(VALUE);
    expect(texts(retry.headers)).toEqual({
      [HEADER.sourceId]: SOURCE_ID,
      [HEADER.destinationId]: DESTINATION_ID,
      [HEADER.callType]: 'track',
      [HEADER.messageId]: 'm-1',
      [HEADER.integrations]: '{"Webhooks":true}',
      [HEADER.attempt]: '2',
      [HEADER.firstAttemptAt]: '1700000000000',
      [HEADER.dueAt]: '1700000060000',
      [HEADER.webhookIds]: 'w-2,w-3',
      [HEADER.reason]: 'http_5xx',
      [HEADER.lastStatus]: '503',
    });
  });

  it("replaces a previous retry's headers", () => {
    const incoming = record({
      [HEADER.attempt]: '2',
      [HEADER.dueAt]: '1',
      [HEADER.webhookIds]: 'w-1,w-2,w-3',
      [HEADER.reason]: 'timeout',
      [HEADER.lastStatus]: '500',
    });
    const retry = retryRecord(incoming, {
      ...SCHEDULE,
      delaySeconds: 300,
      attempt: 3,
      lastStatus: undefined,
      reason: 'connection_error',
    });
    const headers = texts(retry.headers);
    expect(retry.topic).toBe('sluice.deliveries.retry.5m.v1');
    expect(headers[HEADER.attempt]).toBe('3');
    expect(headers[HEADER.dueAt]).toBe('1700000060000');
    expect(headers[HEADER.webhookIds]).toBe('w-2,w-3');
    expect(headers[HEADER.reason]).toBe('connection_error');
    expect(headers).not.toHaveProperty(HEADER.lastStatus);
  });

  it("replaces the record's trace context with the attempt's when traces are on", () => {
    const routing = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const attempt = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
    const incoming = record({ [HEADER.traceparent]: routing });
    expect(texts(retryRecord(incoming, SCHEDULE).headers)[HEADER.traceparent]).toBe(routing);
    const retry = retryRecord(incoming, SCHEDULE, { [HEADER.traceparent]: attempt });
    expect(texts(retry.headers)[HEADER.traceparent]).toBe(attempt);
  });

  it('drops the webhook ids header when the retry covers every webhook', () => {
    const retry = retryRecord(record({ [HEADER.webhookIds]: 'w-1' }), {
      ...SCHEDULE,
      webhookIds: undefined,
    });
    expect(texts(retry.headers)).not.toHaveProperty(HEADER.webhookIds);
  });
});

describe(deadRecord.name, () => {
  it('puts the same key and bytes on the dead-letter topic, with why and when', () => {
    const incoming = record({
      [HEADER.attempt]: '4',
      [HEADER.firstAttemptAt]: '1700000000000',
      [HEADER.dueAt]: '1700000300000',
      [HEADER.webhookIds]: 'w-1',
    });
    const dead = deadRecord(incoming, {
      reason: 'http_4xx',
      lastStatus: 410,
      attempts: 4,
      firstAttemptAt: 1_700_000_000_000,
      lastAttemptAt: 1_700_000_301_000,
    });
    expect(dead.topic).toBe(TOPIC.deliveriesDead);
    expect(dead.topic).toBe('sluice.deliveries.dead.v1');
    expect(dead.key).toBe(KEY);
    expect(dead.value).toBe(VALUE);
    expect(texts(dead.headers)).toEqual({
      [HEADER.sourceId]: SOURCE_ID,
      [HEADER.destinationId]: DESTINATION_ID,
      [HEADER.callType]: 'track',
      [HEADER.messageId]: 'm-1',
      [HEADER.attempt]: '4',
      [HEADER.firstAttemptAt]: '1700000000000',
      [HEADER.webhookIds]: 'w-1',
      [HEADER.reason]: 'http_4xx',
      [HEADER.lastStatus]: '410',
      [HEADER.lastAttemptAt]: '1700000301000',
    });
  });

  it('records no attempt and no status when none was made', () => {
    const dead = deadRecord(record({ [HEADER.lastStatus]: '503' }), {
      reason: 'missing_value',
      lastStatus: undefined,
      attempts: 0,
      firstAttemptAt: undefined,
      lastAttemptAt: 5,
    });
    const headers = texts(dead.headers);
    expect(headers[HEADER.attempt]).toBe('0');
    expect(headers[HEADER.reason]).toBe('missing_value');
    expect(headers).not.toHaveProperty(HEADER.lastStatus);
    expect(headers).not.toHaveProperty(HEADER.firstAttemptAt);
    expect(headers).not.toHaveProperty(HEADER.dueAt);
  });

  it('keeps a record without a value producible', () => {
    const dead = deadRecord(record({}, { value: null, key: null }), {
      reason: 'missing_value',
      lastStatus: undefined,
      attempts: 0,
      firstAttemptAt: undefined,
      lastAttemptAt: 5,
    });
    expect(dead.value).toBe('');
    expect(dead.key).toBeNull();
  });
});

describe(outcomeRecord.name, () => {
  it('publishes a dead outcome readable by parseDeliveryOutcome, keyed like the delivery', () => {
    const dead = {
      reason: 'http_4xx',
      lastStatus: 404,
      attempts: 2,
      firstAttemptAt: Date.parse('2030-01-02T03:00:00.000Z'),
      lastAttemptAt: Date.parse('2030-01-02T03:04:05.678Z'),
    };
    const answers = [
      {
        webhookId: 'w-1',
        result: { kind: 'permanent', reason: 'http_4xx', status: 404, detail: 'HTTP 404' },
        latencyMs: 12.34,
      } as const,
    ];
    const f = facts({ attempt: 2 });
    const value = outcomeJson(f, { kind: 'dead', dead }, answers, dead.lastAttemptAt);
    const outcome = outcomeRecord(record(), f, value);
    expect(outcome.topic).toBe(TOPIC.deliveryOutcomes);
    expect(outcome.key).toBe(KEY);
    expect(texts(outcome.headers)).toEqual({
      [HEADER.destinationId]: DESTINATION_ID,
      [HEADER.messageId]: 'm-1',
      [HEADER.callType]: 'delete',
    });
    expect(parseDeliveryOutcome(outcome.value)).toEqual({
      deliveryId: DELIVERY_ID,
      messageId: 'm-1',
      sourceId: SOURCE_ID,
      destinationId: DESTINATION_ID,
      type: 'delete',
      result: 'dead',
      reason: 'http_4xx',
      lastStatus: 404,
      attempts: 2,
      firstAttemptAt: '2030-01-02T03:00:00.000Z',
      at: '2030-01-02T03:04:05.678Z',
      webhooks: [
        {
          webhookId: 'w-1',
          kind: 'permanent',
          status: 404,
          reason: 'http_4xx',
          detail: 'HTTP 404',
          latencyMs: 12.3,
        },
      ],
    });
  });

  it('leaves reason, status and webhooks out of a discarded outcome', () => {
    const f = facts({ messageId: undefined, sourceId: undefined, type: undefined });
    const value = outcomeJson(
      f,
      { kind: 'discarded', reason: 'destination_disabled', attempts: 0 },
      undefined,
      0,
    );
    const outcome = outcomeRecord(record(), f, value);
    expect(parseDeliveryOutcome(outcome.value)).toEqual({
      deliveryId: DELIVERY_ID,
      messageId: '',
      sourceId: '',
      destinationId: DESTINATION_ID,
      type: '',
      result: 'discarded',
      reason: 'destination_disabled',
      attempts: 0,
      firstAttemptAt: '1970-01-01T00:00:00.000Z',
      at: '1970-01-01T00:00:00.000Z',
    });
    const keys = Object.keys(JSON.parse(outcome.value.toString()));
    expect(keys).not.toContain('lastStatus');
    expect(keys).not.toContain('webhooks');
  });

  it('gives a retrying outcome its next attempt time and the attempts made', () => {
    const value = outcomeJson(
      facts({ type: 'track', event: 'Bought' }),
      {
        kind: 'retry',
        retry: {
          delaySeconds: 10,
          attempt: 2,
          firstAttemptAt: 1_000,
          dueAt: 11_000,
          webhookIds: ['w-1'],
          reason: 'http_5xx',
          lastStatus: 503,
        },
      },
      undefined,
      1_000,
    );
    expect(parseDeliveryOutcome(value)).toMatchObject({
      result: 'retrying',
      event: 'Bought',
      reason: 'http_5xx',
      lastStatus: 503,
      attempts: 1,
      firstAttemptAt: '1970-01-01T00:00:01.000Z',
      nextAttemptAt: '1970-01-01T00:00:11.000Z',
    });
  });
});

describe(str.name, () => {
  it.each([
    ['', '""'],
    ['m-1 plain ✓ Zoë', '"m-1 plain ✓ Zoë"'],
    ['a "quote"', '"a \\"quote\\""'],
    ['back\\slash', '"back\\\\slash"'],
    ['line\nfeed\u0000', '"line\\nfeed\\u0000"'],
    ['c1 \u0085 control', '"c1 \u0085 control"'],
    ['lone \ud800 surrogate', '"lone \\ud800 surrogate"'],
    ['pair 😀', '"pair 😀"'],
  ])('writes %j as JSON.stringify does', (text, json) => {
    expect(str(text)).toBe(json);
    expect(str(text)).toBe(JSON.stringify(text));
  });
});

describe(outcomeJson.name, () => {
  const now = Date.parse('2030-01-02T03:04:05.678Z');

  it('writes a first try delivered as valid JSON, text of any kind escaped', () => {
    const tricky = 'Ordered "x" \\ </script>\n\u2028 ✓';
    const json = outcomeJson(
      facts({ type: 'track', event: tricky, messageId: tricky, replayOf: 'd-old' }),
      { kind: 'delivered', attempts: 1 },
      [
        { webhookId: 'w-1', result: { kind: 'success', status: 204 }, latencyMs: 3.06 },
        {
          webhookId: 'w-2',
          result: { kind: 'retryable', reason: 'timeout', detail: 'no answer in 10 s' },
          latencyMs: 10_000,
        },
      ],
      now,
    );
    expect(JSON.parse(json)).toEqual({
      deliveryId: DELIVERY_ID,
      messageId: tricky,
      sourceId: SOURCE_ID,
      destinationId: DESTINATION_ID,
      type: 'track',
      event: tricky,
      replayOf: 'd-old',
      at: now,
      result: 'delivered',
      attempts: 1,
      lastStatus: 204,
      webhooks: [
        { webhookId: 'w-1', kind: 'success', status: 204, latencyMs: 3.1 },
        {
          webhookId: 'w-2',
          kind: 'retryable',
          reason: 'timeout',
          detail: 'no answer in 10 s',
          latencyMs: 10_000,
        },
      ],
    });
    // A first try's first attempt is its `at`: left out, and filled in when read.
    expect(parseDeliveryOutcome(json)).toMatchObject({
      at: '2030-01-02T03:04:05.678Z',
      firstAttemptAt: '2030-01-02T03:04:05.678Z',
    });
  });

  it.each(['Café ☕', 'emoji 😀', 'lone \ud800 half', 'tab\there', 'plain-id_1.2:3'])(
    'writes %j back as it was',
    (text) => {
      const json = outcomeJson(
        facts({ type: 'track', event: text, messageId: text }),
        { kind: 'delivered', attempts: 1 },
        undefined,
        now,
      );
      expect(JSON.parse(json)).toMatchObject({ event: text, messageId: text });
    },
  );

  it("carries the call's user ids, and a failure's response body and masked request headers", () => {
    const json = outcomeJson(
      facts({ type: 'track', userId: 'u-1', anonymousId: 'a "1"' }),
      { kind: 'delivered', attempts: 1 },
      [
        {
          webhookId: 'w-1',
          result: {
            kind: 'permanent',
            reason: 'http_4xx',
            status: 422,
            detail: 'HTTP 422',
            body: '{"error":"bad \\"x\\""}',
          },
          latencyMs: 12,
          requestHeaders: { authorization: '********', 'user-agent': 'Sluice/1.0' },
        },
      ],
      now,
    );
    const outcome = parseDeliveryOutcome(json);
    expect(outcome).toMatchObject({ userId: 'u-1', anonymousId: 'a "1"' });
    expect(outcome?.webhooks).toEqual([
      {
        webhookId: 'w-1',
        kind: 'permanent',
        status: 422,
        reason: 'http_4xx',
        detail: 'HTTP 422',
        responseBody: '{"error":"bad \\"x\\""}',
        requestHeaders: { authorization: '********', 'user-agent': 'Sluice/1.0' },
        latencyMs: 12,
      },
    ]);
  });

  it('leaves an outcome whose time is out of range unreadable rather than wrong', () => {
    const json = outcomeJson(facts(), { kind: 'delivered', attempts: 1 }, undefined, 1e20);
    expect(parseDeliveryOutcome(json)).toBeUndefined();
  });
});
