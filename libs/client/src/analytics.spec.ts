import { Receiver } from '../test/receiver';
import { Analytics } from './analytics';
import { AnalyticsError } from './errors';
import { LIBRARY } from './library';
import { MAX_CALL_BYTES, MAX_REQUEST_BYTES } from './limits';
import { AnalyticsOptions } from './options';

const WRITE_KEY = 'wk-0123456789abcdef0123456789abcdef';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe(Analytics.name, () => {
  let receiver: Receiver;
  let errors: AnalyticsError[];
  const clients: Analytics[] = [];

  /** A client of the receiver that collects errors; closed after each test. */
  const client = (options: Partial<AnalyticsOptions> = {}) => {
    const analytics = new Analytics({
      writeKey: WRITE_KEY,
      endpoint: receiver.url,
      flushAfterMs: 60_000,
      retryMinDelayMs: 5,
      retryMaxDelayMs: 20,
      onError: (error) => errors.push(error),
      debug: false,
      ...options,
    });
    clients.push(analytics);
    return analytics;
  };

  beforeEach(async () => {
    receiver = await new Receiver().start();
    errors = [];
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await receiver.stop();
  });

  it('posts every call type to /v1/batch with Basic auth, messageIds, sentAt and the library', async () => {
    const analytics = client();
    const ids = [
      analytics.identify({ userId: 'u-1', traits: { plan: 'pro' } }),
      analytics.track({ userId: 'u-1', event: 'Order Completed', properties: { total: 12.5 } }),
      analytics.page({ anonymousId: 'a-1', name: 'Pricing', properties: { path: '/pricing' } }),
      analytics.screen({ userId: 'u-1', name: 'Home' }),
      analytics.group({ userId: 'u-1', groupId: 'g-1', traits: { seats: 3 } }),
      analytics.alias({ userId: 'u-1', previousId: 'a-1' }),
    ];
    const before = Date.now();
    await analytics.flush();
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/batch');
    expect(request.headers.authorization).toBe(
      `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
    );
    expect(request.headers['content-type']).toBe('application/json');
    const body = request.body as { batch: Record<string, unknown>[]; sentAt: string };
    expect(Object.keys(body)).toEqual(['batch', 'sentAt']);
    expect(Date.parse(body.sentAt)).toBeGreaterThanOrEqual(before - 1_000);
    const context = { library: { name: LIBRARY.name, version: LIBRARY.version } };
    expect(body.batch).toEqual([
      { type: 'identify', messageId: ids[0], userId: 'u-1', traits: { plan: 'pro' }, context },
      {
        type: 'track',
        messageId: ids[1],
        userId: 'u-1',
        event: 'Order Completed',
        properties: { total: 12.5 },
        context,
      },
      {
        type: 'page',
        messageId: ids[2],
        anonymousId: 'a-1',
        name: 'Pricing',
        properties: { path: '/pricing' },
        context,
      },
      { type: 'screen', messageId: ids[3], userId: 'u-1', name: 'Home', context },
      {
        type: 'group',
        messageId: ids[4],
        userId: 'u-1',
        groupId: 'g-1',
        traits: { seats: 3 },
        context,
      },
      { type: 'alias', messageId: ids[5], userId: 'u-1', previousId: 'a-1', context },
    ]);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(errors).toEqual([]);
  });

  it('sends to the endpoint’s own /v1/import path as is', async () => {
    const analytics = client({ endpoint: `${receiver.url}/v1/import` });
    analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(receiver.requests.map((r) => r.path)).toEqual(['/v1/import']);
  });

  it('sends a batch once flushAt calls are queued, without waiting for the timer', async () => {
    const analytics = client({ flushAt: 3 });
    for (let i = 0; i < 7; i++) analytics.track({ userId: `u-${i}`, event: 'E' });
    await receiver.waitForCalls(6);
    expect(receiver.requests.map((r) => (r.body as { batch: unknown[] }).batch.length)).toEqual([
      3, 3,
    ]);
    expect(analytics.queuedCalls).toBe(1);
    await analytics.flush();
    expect(receiver.calls().map((c) => c.userId)).toEqual(
      Array.from({ length: 7 }, (_, i) => `u-${i}`),
    );
  });

  it('sends what is queued flushAfterMs after a call was queued', async () => {
    const analytics = client({ flushAt: 100, flushAfterMs: 150 });
    const queuedAt = Date.now();
    analytics.track({ userId: 'u', event: 'A' });
    analytics.track({ userId: 'u', event: 'B' });
    await receiver.waitForCalls(2);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].at - queuedAt).toBeGreaterThanOrEqual(140);
    // The next call starts a new wait.
    analytics.track({ userId: 'u', event: 'C' });
    await receiver.waitForCalls(3);
    expect(receiver.requests).toHaveLength(2);
  });

  it('sends every call on its own with flushAt 1', async () => {
    const analytics = client({ flushAt: 1 });
    for (const event of ['A', 'B', 'C', 'D', 'E', 'F']) analytics.track({ userId: 'u', event });
    await receiver.waitForCalls(6);
    expect(receiver.requests.map((r) => (r.body as { batch: unknown[] }).batch.length)).toEqual([
      1, 1, 1, 1, 1, 1,
    ]);
  });

  it('refuses a call over 32,768 bytes at once, and cuts requests at 512,000 bytes', async () => {
    const analytics = client({ flushAt: 100 });
    const pad = (bytes: number) => ({ pad: 'x'.repeat(bytes) });
    expect(() =>
      analytics.track({ userId: 'u', event: 'E', properties: pad(MAX_CALL_BYTES) }),
    ).toThrow(expect.objectContaining({ code: 'call_too_large' }) as Error);
    expect(analytics.queuedCalls).toBe(0);
    for (let i = 0; i < 40; i++) {
      analytics.track({ userId: `u-${i}`, event: 'E', properties: pad(MAX_CALL_BYTES - 300) });
    }
    await analytics.flush();
    expect(receiver.calls()).toHaveLength(40);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(3);
    for (const request of receiver.requests) {
      expect(Buffer.byteLength(request.raw)).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    }
  });

  it('throws on a missing required field and queues nothing', () => {
    const analytics = client();
    expect(() => analytics.track({ userId: 'u' } as never)).toThrow('track: event is required');
    expect(() => analytics.alias({ userId: 'u' } as never)).toThrow(
      'alias: previousId is required',
    );
    expect(analytics.queuedCalls).toBe(0);
  });

  it('refuses a call beyond a full queue, and still sends the queued ones', async () => {
    const analytics = client({ flushAt: 5, maxQueuedCalls: 5, maxInFlightRequests: 1 });
    receiver.respond = () => ({ status: 200, body: { success: true }, delayMs: 200 });
    for (let i = 0; i < 10; i++) analytics.track({ userId: `u-${i}`, event: 'E' });
    // Five went into the request in flight, five wait: the eleventh has no room.
    expect(() => analytics.track({ userId: 'u-10', event: 'E' })).toThrow(
      expect.objectContaining({ code: 'queue_full' }) as Error,
    );
    await analytics.flush();
    expect(receiver.calls()).toHaveLength(10);
  });

  it('reports the calls a 200 answer lists as rejected', async () => {
    const analytics = client();
    receiver.respond = () => ({
      status: 200,
      body: {
        success: true,
        rejected: [{ index: 1, code: 'invalid_call', message: 'timestamp must be a date-time' }],
      },
    });
    analytics.track({ userId: 'u', event: 'A' });
    const second = analytics.track({ userId: 'u', event: 'B', timestamp: 'yesterday' });
    await analytics.flush();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'call_rejected',
      messageIds: [second],
      serverCode: 'invalid_call',
    });
    expect(errors[0].message).toContain('timestamp must be a date-time');
  });

  it('retries 5xx and dropped connections with the same calls, then succeeds', async () => {
    const analytics = client({ maxRetries: 3 });
    receiver.respond = (_request, n) =>
      [{ status: 503 }, { destroy: true }, { status: 500 }][n] ?? { status: 200 };
    const id = analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(receiver.requests).toHaveLength(4);
    for (const request of receiver.requests) {
      expect((request.body as { batch: { messageId: string }[] }).batch).toEqual([
        expect.objectContaining({ messageId: id }),
      ]);
    }
    expect(errors).toEqual([]);
  });

  it('gives up after maxRetries and reports the lost calls', async () => {
    const analytics = client({ maxRetries: 2 });
    receiver.respond = () => ({ status: 502, body: { code: 'bad_gateway', message: 'down' } });
    const id = analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(receiver.requests).toHaveLength(3);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'send_failed', messageIds: [id], status: 502 });
  });

  it('waits as long as a 429 answer’s Retry-After asks', async () => {
    const analytics = client();
    receiver.respond = (_request, n) =>
      n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 };
    analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1].at - receiver.requests[0].at).toBeGreaterThanOrEqual(950);
  });

  it('does not retry a 4xx answer, and reports it', async () => {
    const analytics = client();
    receiver.respond = () => ({
      status: 401,
      body: { code: 'unauthorized', message: 'unknown write key' },
    });
    analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(receiver.requests).toHaveLength(1);
    expect(errors).toEqual([expect.objectContaining({ code: 'request_refused', status: 401 })]);
    expect(errors[0].message).not.toContain(WRITE_KEY);
  });

  it('retries a server that cannot be reached, then reports it', async () => {
    const url = receiver.url;
    await receiver.stop();
    const analytics = client({ endpoint: url, maxRetries: 2 });
    analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(errors).toEqual([expect.objectContaining({ code: 'send_failed' })]);
    expect(errors[0].message).toContain('network error');
    receiver = await new Receiver().start(); // for afterEach
  });

  it('gives up on an attempt without an answer after timeoutMs, and retries it', async () => {
    const analytics = client({ timeoutMs: 100, maxRetries: 1 });
    receiver.respond = () => ({ status: 200, delayMs: 1_000 });
    const started = Date.now();
    analytics.track({ userId: 'u', event: 'E' });
    await analytics.flush();
    expect(Date.now() - started).toBeLessThan(900);
    expect(receiver.requests).toHaveLength(2);
    expect(errors).toEqual([expect.objectContaining({ code: 'send_failed' })]);
    expect(errors[0].message).toContain('network error');
  });

  it('drains on close: every queued and in-flight call is sent, later calls throw', async () => {
    const analytics = client({ flushAt: 20, maxInFlightRequests: 2 });
    receiver.respond = (_request, n) =>
      n % 7 === 3 ? { status: 503 } : { status: 200, delayMs: 10 };
    const ids = new Set<string>();
    for (let i = 0; i < 250; i++) ids.add(analytics.track({ userId: `u-${i % 9}`, event: 'E' }));
    await analytics.close();
    expect(new Set(receiver.calls().map((c) => c.messageId as string))).toEqual(ids);
    expect(errors).toEqual([]);
    expect(() => analytics.track({ userId: 'u', event: 'E' })).toThrow(
      expect.objectContaining({ code: 'closed' }) as Error,
    );
    await expect(analytics.close()).resolves.toBeUndefined();
  });

  it('logs what is queued and sent under DEBUG=analytics, and nothing without it', async () => {
    const lines: string[] = [];
    const saved = process.env.DEBUG;
    try {
      process.env.DEBUG = 'analytics';
      const loud = client({ debug: undefined, log: (line) => lines.push(line) });
      const id = loud.track({ userId: 'u', event: 'E' });
      await loud.flush();
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(`^analytics: queued track ${id}, \\d+ bytes, 1 queued$`)),
        expect.stringMatching(/^analytics: sending 1 call\(s\), \d+ bytes, attempt 1: /),
        'analytics: sent 1 call(s): status 200',
      ]);
      expect(lines.join('\n')).not.toContain(WRITE_KEY);
      process.env.DEBUG = 'express';
      const quiet = client({ debug: undefined, log: (line) => lines.push(line) });
      quiet.track({ userId: 'u', event: 'E' });
      await quiet.flush();
      expect(lines).toHaveLength(3);
    } finally {
      process.env.DEBUG = saved;
    }
  });

  it('writes DEBUG lines to stderr by default', async () => {
    const saved = process.env.DEBUG;
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      process.env.DEBUG = 'analytics';
      const analytics = client({ debug: undefined });
      analytics.track({ userId: 'u', event: 'E' });
      await analytics.close();
      const written = write.mock.calls.map(([chunk]) => String(chunk));
      expect(written).toContainEqual(expect.stringMatching(/^analytics: queued track /));
      expect(written).toContainEqual('analytics: sent 1 call(s): status 200\n');
    } finally {
      write.mockRestore();
      process.env.DEBUG = saved;
    }
  });
});
