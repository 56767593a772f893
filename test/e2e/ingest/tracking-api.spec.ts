import { randomUUID } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';

import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { eventually, scrapeMetric } from '../../helpers/services';
import { json } from '../../helpers/topic-reader';
import { SAMPLE_CALLS } from '../../fixtures/calls';

const h = new IngestHarness();
let source: TestSource;

beforeAll(async () => {
  await h.start({ INGEST_USAGE_FLUSH_SECONDS: '1' });
  source = await h.source();
});

afterAll(() => h.close());

/** The record on sluice.calls.v1 for a messageId. */
async function published(messageId: string): Promise<IncomingRecord> {
  const [record] = await h.reader.waitFor(
    TOPIC.calls,
    (r) => headerText(r, HEADER.messageId) === messageId,
  );
  return record;
}

describe('the tracking API', () => {
  it.each(Object.entries(SAMPLE_CALLS))(
    'publishes a %s call, enriched, keyed and with headers',
    async (type, fields) => {
      const messageId = randomUUID();
      const before = Date.now();
      const answer = await h.post(
        `/v1/${type}`,
        { userId: 'user-1', messageId, ...fields },
        { basic: source.writeKey },
      );
      expect(answer).toEqual({ status: 200, body: { success: true } });
      const record = await published(messageId);
      expect(record.key?.toString()).toBe(`${source.id}:user-1`);
      expect(headerText(record, HEADER.sourceId)).toBe(source.id);
      expect(headerText(record, HEADER.callType)).toBe(type);
      expect(headerText(record, HEADER.integrations)).toBe('{"Webhooks":true}');
      // Who the call is about, for the delivery ledger's search.
      expect(headerText(record, HEADER.userId)).toBe('user-1');
      expect(headerText(record, HEADER.anonymousId)).toBeUndefined();
      const call = json(record);
      expect(call).toMatchObject({ version: 1, type, userId: 'user-1', messageId, ...fields });
      expect(call.context).toEqual({ ip: '127.0.0.1' });
      // No timestamp was sent: the server's time is used, equal to receivedAt.
      expect(call.timestamp).toBe(call.receivedAt);
      const receivedAt = Date.parse(call.receivedAt as string);
      expect(receivedAt).toBeGreaterThanOrEqual(before - 5);
      expect(receivedAt).toBeLessThanOrEqual(Date.now() + 5);
    },
  );

  it('takes the write key from the body, and never passes it on', async () => {
    const messageId = randomUUID();
    const answer = await h.post('/v1/track', {
      writeKey: source.writeKey,
      anonymousId: 'anon-7',
      event: 'Viewed',
      messageId,
    });
    expect(answer.status).toBe(200);
    const record = await published(messageId);
    expect(record.key?.toString()).toBe(`${source.id}:anon-7`);
    expect(json(record)).not.toHaveProperty('writeKey');
  });

  it("takes the Basic header's write key over another one in the body, silently", async () => {
    const other = await h.source();
    const messageId = randomUUID();
    const call = { writeKey: source.writeKey, userId: 'u-header', event: 'E', messageId };
    await expect(h.post('/v1/track', call, { basic: other.writeKey })).resolves.toEqual({
      status: 200,
      body: { success: true },
    });
    const record = await published(messageId);
    expect(headerText(record, HEADER.sourceId)).toBe(other.id);
    expect(json(record)).not.toHaveProperty('writeKey');
    // The header alone decides: an unknown key there is refused whatever the body holds.
    await expect(
      h.post('/v1/track', { ...call, messageId: randomUUID() }, { basic: 'no-such-key' }),
    ).resolves.toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('generates a messageId and turns numeric ids into strings', async () => {
    const userId = Math.floor(Math.random() * 1e9);
    expect((await h.post('/v1/identify', { userId }, { basic: source.writeKey })).status).toBe(200);
    const [record] = await h.reader.waitFor(
      TOPIC.calls,
      (r) => r.key?.toString() === `${source.id}:${userId}`,
    );
    const call = json(record);
    expect(call.userId).toBe(String(userId));
    expect(call.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(headerText(record, HEADER.messageId)).toBe(call.messageId);
  });

  it('corrects clock skew from sentAt, accepting +0700 offsets, and keeps the sent time', async () => {
    const messageId = randomUUID();
    // The client's clock is 1 hour ahead; the event happened 10 s before sending.
    const sent = Date.now() + 3_600_000;
    const offset = (ms: number) => new Date(ms + 7 * 3_600_000).toISOString().replace('Z', '+0700');
    const timestamp = offset(sent - 10_000);
    const answer = await h.post(
      '/v1/track',
      {
        userId: 'u-skew',
        event: 'E',
        messageId,
        timestamp,
        sentAt: offset(sent),
      },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    const call = json(await published(messageId));
    expect(call.originalTimestamp).toBe(timestamp);
    const corrected = Date.parse(call.timestamp as string);
    expect(Date.parse(call.receivedAt as string) - corrected).toBe(10_000);
  });

  it('keeps the timestamp of a call dated a year ago', async () => {
    const messageId = randomUUID();
    const timestamp = new Date(Date.now() - 365 * 86_400_000).toISOString();
    await h.post(
      '/v1/track',
      { userId: 'u-old', event: 'E', messageId, timestamp },
      { basic: source.writeKey },
    );
    const call = json(await published(messageId));
    expect(call.timestamp).toBe(timestamp);
    expect(call).not.toHaveProperty('originalTimestamp');
  });

  it('accepts a gzip body', async () => {
    const messageId = randomUUID();
    const answer = await h.post(
      '/v1/page',
      { userId: 'u-gz', messageId },
      { basic: source.writeKey, gzip: true },
    );
    expect(answer.status).toBe(200);
    expect(json(await published(messageId)).type).toBe('page');
  });

  it.each(['batch', 'import'])(
    '/v1/%s accepts the valid calls and lists the invalid ones',
    async (route) => {
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const answer = await h.post(`/v1/${route}`, {
        writeKey: source.writeKey,
        context: { library: { name: 'analytics-test' }, locale: 'de-DE' },
        integrations: { All: false, Webhooks: true },
        batch: [
          {
            type: 'track',
            userId: 'b1',
            event: 'A',
            messageId: ids[0],
            context: { locale: 'fr-FR' },
          },
          { type: 'track', userId: 'b2', messageId: 'no-event', writeKey: 'leaked?' },
          { type: 'fly', userId: 'b3' },
          'not an object',
          {
            type: 'identify',
            anonymousId: 'b4',
            messageId: ids[1],
            integrations: { Webhooks: false },
          },
          { type: 'alias', userId: 'b5', previousId: 'b5-old', messageId: ids[2] },
        ],
      });
      expect(answer.status).toBe(200);
      expect(answer.body.success).toBe(true);
      expect(answer.body.rejected).toEqual([
        { index: 1, code: 'invalid_call', message: expect.stringMatching(/^event /) as string },
        {
          index: 2,
          code: 'invalid_call',
          message: expect.stringMatching(/^type must be one of/) as string,
        },
        { index: 3, code: 'invalid_call', message: 'a batch message must be a JSON object' },
      ]);
      const first = json(await published(ids[0]));
      // The batch's context is merged under the message's own; the message wins.
      expect(first.context).toEqual({
        library: { name: 'analytics-test' },
        locale: 'fr-FR',
        ip: '127.0.0.1',
      });
      expect(first.integrations).toEqual({ All: false, Webhooks: true });
      const second = await published(ids[1]);
      expect(headerText(second, HEADER.integrations)).toBe('{"Webhooks":false}');
      expect(json(await published(ids[2]))).toMatchObject({
        type: 'alias',
        userId: 'b5',
        previousId: 'b5-old',
      });
      const rejected = await h.reader.waitFor(
        TOPIC.ingestRejected,
        (r) => r.value?.toString().includes('no-event') ?? false,
      );
      expect(headerText(rejected[0], HEADER.reason)).toBe('invalid_call');
      expect(rejected[0].value?.toString()).not.toContain('leaked?');
    },
  );

  it('uses X-Forwarded-For only from trusted proxies', async () => {
    const messageId = randomUUID();
    await h.post(
      '/v1/track',
      { userId: 'u-ip', event: 'E', messageId },
      {
        basic: source.writeKey,
        headers: { 'x-forwarded-for': '203.0.113.9' },
      },
    );
    expect(json(await published(messageId)).context).toEqual({ ip: '127.0.0.1' });
    const trusting = new IngestHarness();
    await trusting.start({ INGEST_TRUSTED_PROXIES: '127.0.0.1' });
    try {
      const other = await trusting.source();
      const id = randomUUID();
      await trusting.post(
        '/v1/track',
        { userId: 'u-ip', event: 'E', messageId: id },
        {
          basic: other.writeKey,
          headers: { 'x-forwarded-for': '203.0.113.9' },
        },
      );
      const [record] = await trusting.reader.waitFor(
        TOPIC.calls,
        (r) => headerText(r, HEADER.messageId) === id,
      );
      expect(json(record).context).toEqual({ ip: '203.0.113.9' });
    } finally {
      await trusting.close();
    }
  });

  it('counts accepted calls per source and day in PostgreSQL', async () => {
    const counted = await h.source();
    for (let i = 0; i < 3; i += 1) {
      await h.post('/v1/track', { userId: `u${i}`, event: 'E' }, { basic: counted.writeKey });
    }
    await h.post(
      '/v1/batch',
      { batch: [{ type: 'page', userId: 'p' }, { type: 'nope' }] },
      { basic: counted.writeKey },
    );
    const calls = await eventually(
      async () => {
        const rows = await h.sql<{ calls: string }>(
          'SELECT calls::text FROM source_usage WHERE source_id = $1',
          [counted.id],
        );
        return rows[0]?.calls === '4' ? rows[0].calls : undefined;
      },
      10_000,
      'usage of 4 calls',
    );
    expect(calls).toBe('4');
  });
});

describe('refusals', () => {
  const big = 'x'.repeat(33_000);

  it.each([
    ['malformed JSON', '/v1/track', '{"userId": "u", ', 400, 'invalid_json'],
    ['a JSON array', '/v1/track', '[1,2]', 400, 'invalid_json'],
    ['an invalid single call', '/v1/track', { userId: 'u' }, 400, 'invalid_call'],
    ['no user', '/v1/identify', { traits: {} }, 400, 'invalid_call'],
    [
      'a bad timestamp',
      '/v1/track',
      { userId: 'u', event: 'E', timestamp: 'yesterday' },
      400,
      'invalid_call',
    ],
    [
      'properties not an object',
      '/v1/track',
      { userId: 'u', event: 'E', properties: 'x' },
      400,
      'invalid_call',
    ],
    ['alias without previousId', '/v1/alias', { userId: 'u' }, 400, 'invalid_call'],
    ['group without groupId', '/v1/group', { userId: 'u' }, 400, 'invalid_call'],
    [
      'a call over 32 KB',
      '/v1/track',
      { userId: 'u', event: 'E', properties: { big } },
      400,
      'call_too_large',
    ],
    ['an empty batch', '/v1/batch', { batch: [] }, 400, 'invalid_batch'],
    ['a batch that is not an array', '/v1/batch', { batch: {} }, 400, 'invalid_batch'],
  ])('%s: %s %s', async (_what, path, body, status, code) => {
    const answer = await h.post(path, body, { basic: source.writeKey });
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ code, message: expect.any(String) as string });
  });

  it('refuses a request over 500 KB, before parsing and after inflating', async () => {
    const calls = Array.from({ length: 20 }, () => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      properties: { big: 'y'.repeat(30_000) },
    }));
    const plain = await h.post('/v1/batch', { batch: calls }, { basic: source.writeKey });
    expect(plain).toEqual({
      status: 400,
      body: { code: 'request_too_large', message: expect.any(String) as string },
    });
    // Compresses to a few KB, inflates past the limit: refused while inflating.
    const zipped = await h.post(
      '/v1/batch',
      { batch: calls },
      { basic: source.writeKey, gzip: true },
    );
    expect(zipped.status).toBe(400);
    expect(zipped.body.code).toBe('request_too_large');
  });

  it('refuses a body that is not valid gzip, and unknown encodings', async () => {
    const bad = await h.post('/v1/track', 'not gzip', {
      basic: source.writeKey,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(bad).toEqual({
      status: 400,
      body: { code: 'invalid_body', message: expect.any(String) as string },
    });
    const br = await h.post('/v1/track', '{}', {
      basic: source.writeKey,
      headers: { 'content-encoding': 'br' },
    });
    expect(br.status).toBe(415);
    expect(br.body.code).toBe('unsupported_encoding');
  });

  it('answers 401 for an unknown, missing or disabled write key', async () => {
    const disabled = await h.source(false);
    const call = { userId: 'u', event: 'E' };
    for (const answer of [
      await h.post('/v1/track', call, { basic: 'no-such-key' }),
      await h.post('/v1/track', call),
      await h.post('/v1/track', { ...call, writeKey: disabled.writeKey }),
      await h.post('/v1/track', call, { basic: disabled.writeKey }),
    ]) {
      expect(answer).toEqual({
        status: 401,
        body: { code: 'unauthorized', message: 'unknown or disabled write key' },
      });
    }
  });

  it('answers 404 as JSON for an unknown route', async () => {
    const answer = await h.post('/v1/unknown', {}, { basic: source.writeKey });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
  });

  it('counts requests by route and status, and calls accepted and refused (in a batch or alone)', async () => {
    const metric = (name: string, labels: Record<string, string>) =>
      scrapeMetric(h.url, name, labels);
    const before = {
      ok: await metric('sluice_ingest_requests_total', { route: 'track', status: '200' }),
      other: await metric('sluice_ingest_requests_total', { route: 'other', status: '404' }),
      accepted: await metric('sluice_ingest_calls_accepted_total', { type: 'track' }),
      refused: await metric('sluice_ingest_calls_rejected_total', { reason: 'invalid_call' }),
    };
    await h.post('/v1/track', { userId: 'u', event: 'Counted' }, { basic: source.writeKey });
    await h.post('/v1/nothing', {}, { basic: source.writeKey });
    const batch = { batch: [{ type: 'track', userId: 'u', event: 'E' }, { type: 'track' }] };
    await h.post('/v1/batch', batch, { basic: source.writeKey });
    await h.post('/v1/track', { userId: 'u' }, { basic: source.writeKey });
    // A request is counted once its answer is sent, so maybe just after the client has it.
    const counted = async () =>
      (await metric('sluice_ingest_requests_total', { route: 'track', status: '200' })) ===
        before.ok + 1 &&
      (await metric('sluice_ingest_requests_total', { route: 'other', status: '404' })) ===
        before.other + 1;
    await eventually(async () => ((await counted()) ? true : undefined), 5_000, 'the counts');
    expect(await metric('sluice_ingest_calls_accepted_total', { type: 'track' })).toBe(
      before.accepted + 2,
    );
    expect(await metric('sluice_ingest_calls_rejected_total', { reason: 'invalid_call' })).toBe(
      before.refused + 2,
    );
  });

  it('publishes nothing with a write key in it, on any topic', async () => {
    // Everything the tests above published, on both topics.
    await eventually(() => (h.reader.records.length > 10 ? true : undefined));
    for (const record of h.reader.records) {
      const bytes = Buffer.concat([
        record.value ?? Buffer.alloc(0),
        ...Object.values(record.headers).map((v) => v ?? Buffer.alloc(0)),
      ]);
      expect(bytes.toString('utf8')).not.toContain(source.writeKey);
      expect(bytes.toString('utf8')).not.toContain('"writeKey"');
    }
  });
});
