import { randomUUID } from 'node:crypto';

import { HEADER, MAX_CALL_DEPTH, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { eventually, scrapeMetric } from '../../helpers/services';
import { json } from '../../helpers/topic-reader';
import { SAMPLE_CALLS } from '../../fixtures/calls';

/**
 * What Segment's browser library (analytics-next) and the mobile libraries send, short of a
 * real browser (browser-clients.spec.ts): the short routes, CORS, text/plain bodies, the
 * settings document and /v1/m; with the batch-level clock skew correction and the nesting
 * limit.
 */
const h = new IngestHarness();
let source: TestSource;

const PAGE = 'http://127.0.0.1:3000';

beforeAll(async () => {
  await h.start();
  source = await h.source();
});

afterAll(() => h.close());

/** An answer with its headers. */
interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** A request to `harness` as a browser or a library would send it. */
async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  harness: IngestHarness = h,
): Promise<Reply> {
  const res = await fetch(`${harness.url}${path}`, { method: init.method ?? 'POST', ...init });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** `Authorization: Basic` of a write key, as analytics-next builds it. */
function basic(writeKey: string): string {
  return `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
}

/** What analytics-next posts for one call from a page of `origin`. */
function fromPage(writeKey: string, call: Record<string, unknown>, origin = PAGE) {
  return {
    headers: { origin, 'content-type': 'text/plain', authorization: basic(writeKey) },
    body: JSON.stringify({ ...call, writeKey, sentAt: new Date().toISOString() }),
  };
}

/** The record on sluice.calls.v1 for a messageId. */
async function published(messageId: string, harness: IngestHarness = h): Promise<IncomingRecord> {
  const [record] = await harness.reader.waitFor(
    TOPIC.calls,
    (r) => headerText(r, HEADER.messageId) === messageId,
  );
  return record;
}

/** Sets a source's origin allow-list and waits until the app's cache has it. */
async function allowOrigins(
  writeKey: string,
  origins: string[],
  harness: IngestHarness = h,
): Promise<void> {
  await harness.sql('UPDATE source SET allowed_origins = $1 WHERE write_key = $2', [
    origins,
    writeKey,
  ]);
  const cache = harness.app.get(SettingsCache);
  await eventually(
    () =>
      cache.sourceByWriteKey(writeKey)?.allowedOrigins.join() === origins.join() ? true : undefined,
    10_000,
    'the allow-list in the cache',
  );
}

describe('the short routes', () => {
  it.each([
    ['t', 'track'],
    ['p', 'page'],
    ['s', 'screen'],
    ['i', 'identify'],
    ['g', 'group'],
    ['a', 'alias'],
  ] as const)('/v1/%s takes a %s call, as analytics-next sends it', async (route, type) => {
    const messageId = randomUUID();
    const call = { userId: 'u-short', messageId, ...SAMPLE_CALLS[type] };
    const answer = await send(`/v1/${route}`, fromPage(source.writeKey, call));
    expect([answer.status, answer.body]).toEqual([200, { success: true }]);
    const record = await published(messageId);
    expect(headerText(record, HEADER.callType)).toBe(type);
    expect(json(record)).toMatchObject({ version: 1, type, userId: 'u-short' });
    expect(json(record)).not.toHaveProperty('writeKey');
  });

  it('/v1/b takes a batch like /v1/batch, listing the refused calls', async () => {
    const ids = [randomUUID(), randomUUID()];
    const answer = await send('/v1/b', {
      headers: { 'content-type': 'text/plain', authorization: basic(source.writeKey) },
      body: JSON.stringify({
        writeKey: source.writeKey,
        sentAt: new Date().toISOString(),
        batch: [
          { type: 'track', userId: 'u-b', event: 'A', messageId: ids[0] },
          { type: 'track', userId: 'u-b' },
          { type: 'page', anonymousId: 'a-b', messageId: ids[1] },
        ],
      }),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.rejected).toEqual([
      { index: 1, code: 'invalid_call', message: expect.stringMatching(/^event /) as string },
    ]);
    await published(ids[0]);
    await published(ids[1]);
  });

  it('counts requests under the short names', async () => {
    const before = await scrapeMetric(h.url, 'sluice_ingest_requests_total', {
      route: 't',
      status: '200',
    });
    await send('/v1/t', fromPage(source.writeKey, { userId: 'u', event: 'Counted' }));
    await eventually(async () =>
      (await scrapeMetric(h.url, 'sluice_ingest_requests_total', { route: 't', status: '200' })) ===
      before + 1
        ? true
        : undefined,
    );
  });
});

describe('CORS', () => {
  const preflightFrom = (origin: string, harness: IngestHarness = h) =>
    send(
      '/v1/t',
      {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      },
      harness,
    );

  it('answers a preflight from any origin while a source allows them all', async () => {
    const answer = await preflightFrom('https://any.example');
    expect(answer.status).toBe(204);
    expect(Object.fromEntries(answer.headers)).toMatchObject({
      'access-control-allow-origin': 'https://any.example',
      'access-control-allow-methods': 'POST, GET',
      'access-control-max-age': '7200',
      vary: 'Origin',
    });
    // Named: a `*` would not cover Authorization outside Chromium.
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
      'authorization',
    );
  });

  it("lets the page read the answer to its call, and refuses a page its source doesn't list", async () => {
    const shop = await h.source();
    await allowOrigins(shop.writeKey, ['https://shop.example']);
    const allowedId = randomUUID();
    const allowed = await send(
      '/v1/t',
      fromPage(
        shop.writeKey,
        { userId: 'u', event: 'E', messageId: allowedId },
        'https://shop.example',
      ),
    );
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    await published(allowedId);

    const refusedId = randomUUID();
    const refused = await send(
      '/v1/t',
      fromPage(shop.writeKey, { userId: 'u', event: 'E', messageId: refusedId }, PAGE),
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: 'origin_not_allowed',
      message: expect.any(String) as string,
    });
    // The browser may not even read the refusal.
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // Calls without an Origin (servers, mobile apps) are not concerned by the list.
    const serverId = randomUUID();
    const server = await h.post(
      '/v1/track',
      { userId: 'u', event: 'E', messageId: serverId },
      { basic: shop.writeKey },
    );
    expect(server.status).toBe(200);
    await published(serverId);
    expect(h.reader.withHeader(TOPIC.calls, HEADER.messageId, refusedId)).toEqual([]);
  });

  it('refuses the preflight of an origin no enabled source allows', async () => {
    const strict = await new IngestHarness().start();
    try {
      const only = await strict.source();
      await allowOrigins(only.writeKey, ['https://shop.example'], strict);
      const refused = await preflightFrom('https://evil.example', strict);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      const allowed = await preflightFrom('https://shop.example', strict);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    } finally {
      await strict.close();
    }
  });

  it('adds no CORS headers to a request without Origin, nor to health and metrics', async () => {
    const server = await send('/v1/track', {
      headers: { 'content-type': 'application/json', authorization: basic(source.writeKey) },
      body: JSON.stringify({ userId: 'u', event: 'E' }),
    });
    expect(server.headers.get('access-control-allow-origin')).toBeNull();
    const health = await fetch(`${h.url}/health/live`, { headers: { origin: PAGE } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('content types', () => {
  it.each(['text/plain', 'text/plain;charset=UTF-8', 'application/json; charset=utf-8'])(
    'reads a %s body as JSON',
    async (type) => {
      const messageId = randomUUID();
      const answer = await send('/v1/track', {
        headers: { 'content-type': type, authorization: basic(source.writeKey) },
        body: JSON.stringify({ userId: 'u', event: 'E', messageId }),
      });
      expect(answer.status).toBe(200);
      await published(messageId);
    },
  );

  it('reads a body sent without a Content-Type as JSON', async () => {
    const messageId = randomUUID();
    const answer = await send('/v1/track', {
      headers: { authorization: basic(source.writeKey) },
      body: Buffer.from(JSON.stringify({ userId: 'u', event: 'E', messageId })) as never,
    });
    expect(answer.status).toBe(200);
    await published(messageId);
  });

  it.each([
    ['application/x-www-form-urlencoded', 'userId=u&event=E'],
    ['application/xml', '<track><userId>u</userId></track>'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('refuses %s with 415 unsupported_media_type', async (type, body) => {
    const answer = await send('/v1/track', {
      headers: { 'content-type': type, authorization: basic(source.writeKey) },
      body,
    });
    expect(answer.status).toBe(415);
    expect(answer.body).toEqual({
      code: 'unsupported_media_type',
      message: expect.stringContaining('application/json or text/plain') as string,
    });
  });

  it('answers 400 invalid_json for a text/plain body that is not JSON', async () => {
    const answer = await send('/v1/t', {
      headers: { 'content-type': 'text/plain', authorization: basic(source.writeKey) },
      body: 'userId=u',
    });
    expect([answer.status, answer.body.code]).toEqual([400, 'invalid_json']);
  });
});

describe('the settings document', () => {
  const path = (writeKey: string) => `/v1/projects/${writeKey}/settings`;

  it('points the libraries at this ingest, cacheable, readable by any page', async () => {
    const answer = await send(path(source.writeKey), { method: 'GET', headers: { origin: PAGE } });
    expect(answer.status).toBe(200);
    expect(answer.body.integrations).toEqual({
      'Segment.io': {
        apiKey: source.writeKey,
        apiHost: `${new URL(h.url).host}/v1`,
        protocol: 'http',
      },
    });
    expect(answer.body.metrics).toMatchObject({ sampleRate: 0 });
    expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
    expect(answer.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(answer.headers.get('vary')).toBe('Origin');
    const etag = answer.headers.get('etag') ?? '';
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${h.url}${path(source.writeKey)}`, {
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('answers 404 for an unknown or disabled write key', async () => {
    const disabled = await h.source(false);
    for (const key of ['no-such-key', disabled.writeKey]) {
      const answer = await send(path(key), { method: 'GET' });
      expect([answer.status, answer.body]).toEqual([
        404,
        { code: 'not_found', message: 'unknown or disabled write key' },
      ]);
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
  });

  it("refuses a page whose origin the source doesn't list, and serves a listed one", async () => {
    const shop = await h.source();
    await allowOrigins(shop.writeKey, ['https://shop.example']);
    const refused = await send(path(shop.writeKey), { method: 'GET', headers: { origin: PAGE } });
    expect([refused.status, refused.body.code]).toEqual([403, 'origin_not_allowed']);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const listed = await send(path(shop.writeKey), {
      method: 'GET',
      headers: { origin: 'https://shop.example' },
    });
    expect(listed.status).toBe(200);
  });

  it('uses INGEST_PUBLIC_URL when it is set', async () => {
    const configured = await new IngestHarness().start({
      INGEST_PUBLIC_URL: 'https://ingest.example.com/sluice',
    });
    try {
      const own = await configured.source();
      const answer = await send(path(own.writeKey), { method: 'GET' }, configured);
      expect(answer.body.integrations['Segment.io']).toEqual({
        apiKey: own.writeKey,
        apiHost: 'ingest.example.com/sluice/v1',
        protocol: 'https',
      });
    } finally {
      await configured.close();
    }
  });
});

describe('/v1/m', () => {
  it("takes the browser library's own metrics and drops them", async () => {
    const metric = (labels: Record<string, string>) =>
      scrapeMetric(h.url, 'sluice_ingest_requests_total', labels);
    const before = await metric({ route: 'm', status: '200' });
    // The body and headers of analytics-next's RemoteMetrics.send (core/stats/remote-metrics).
    const answer = await send('/v1/m', {
      headers: { origin: PAGE, 'content-type': 'text/plain' },
      body: JSON.stringify({
        series: [
          {
            type: 'Counter',
            metric: 'analytics_js.invoke.track',
            value: 1,
            tags: { library: 'analytics.js', library_version: 'npm:next-1.84.3' },
          },
        ],
      }),
    });
    expect([answer.status, answer.body]).toEqual([200, { success: true }]);
    expect(answer.headers.get('access-control-allow-origin')).toBe(PAGE);
    await eventually(async () =>
      (await metric({ route: 'm', status: '200' })) === before + 1 ? true : undefined,
    );
  });
});

describe("clock skew corrected with the batch's sentAt", () => {
  it("dates calls without a sentAt of their own by the batch's, keeping originalTimestamp", async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    // The device's clock is an hour ahead; the calls happened 30 s and 5 s before sending.
    const sent = Date.now() + 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const answer = await send('/v1/b', {
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({
        writeKey: source.writeKey,
        sentAt: iso(sent),
        batch: [
          {
            type: 'track',
            anonymousId: 'a',
            event: 'E',
            messageId: ids[0],
            timestamp: iso(sent - 30_000),
          },
          {
            type: 'screen',
            anonymousId: 'a',
            name: 'Home',
            messageId: ids[1],
            timestamp: iso(sent - 5_000),
          },
          { type: 'track', anonymousId: 'a', event: 'E', messageId: ids[2] },
        ],
      }),
    });
    expect(answer.status).toBe(200);
    const [first, second, third] = await Promise.all(
      ids.map(async (id) => json(await published(id))),
    );
    const behind = (call: Record<string, unknown>) =>
      Date.parse(call.receivedAt as string) - Date.parse(call.timestamp as string);
    expect(behind(first)).toBe(30_000);
    expect(first.originalTimestamp).toBe(iso(sent - 30_000));
    expect(first.sentAt).toBe(iso(sent));
    expect(behind(second)).toBe(5_000);
    // No timestamp: the time ingest received it.
    expect(third.timestamp).toBe(third.receivedAt);
    expect(third).not.toHaveProperty('originalTimestamp');
  });
});

describe('nesting depth', () => {
  /**
   * A track call's JSON nesting `depth` levels in all (the call object is level 1), written
   * by hand: at these depths JSON.stringify overflows the test's own stack.
   */
  function deepTrack(depth: number, messageId = randomUUID()): string {
    const wrappers = depth - 2;
    const properties = `${'{"a":'.repeat(wrappers)}{"leaf":true}${'}'.repeat(wrappers)}`;
    return `{"type":"track","userId":"u-deep","event":"Deep","messageId":"${messageId}","properties":${properties}}`;
  }

  it('refuses a call about 4,400 levels deep with 400 call_too_deep, not 500', async () => {
    for (const path of ['/v1/track', '/v1/t']) {
      const answer = await h.post(path, deepTrack(4_400), { basic: source.writeKey });
      expect(answer).toEqual({
        status: 400,
        body: {
          code: 'call_too_deep',
          message: `a call may nest objects and arrays at most ${MAX_CALL_DEPTH} levels deep`,
        },
      });
    }
  });

  it('lists a deep call of a batch under rejected by index and accepts the others', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const first = JSON.stringify({
      type: 'track',
      userId: 'u-deep',
      event: 'Before',
      messageId: ids[0],
    });
    const batch = `{"batch":[${first},${deepTrack(4_400, ids[1])},${deepTrack(MAX_CALL_DEPTH, ids[2])}]}`;
    const answer = await h.post('/v1/batch', batch, { basic: source.writeKey });
    expect(answer).toEqual({
      status: 200,
      body: {
        success: true,
        rejected: [{ index: 1, code: 'call_too_deep', message: expect.any(String) as string }],
      },
    });
    await published(ids[0]);
    // Exactly at the limit: accepted.
    await published(ids[2]);
    const [rejected] = await h.reader.waitFor(
      TOPIC.ingestRejected,
      (r) => headerText(r, HEADER.reason) === 'call_too_deep',
    );
    // Cut at the limit for the rejected topic, the rest as sent.
    expect(json(rejected)).toMatchObject({ messageId: ids[1], event: 'Deep' });
    expect(h.reader.withHeader(TOPIC.calls, HEADER.messageId, ids[1])).toEqual([]);
  });
});
