import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';

import { HEADER, retryTopic, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import {
  makeTestCertificates,
  TestCertificates,
  WebhookReceiver,
} from '../../helpers/webhook-receiver';

/** The signature an implementation independent of the project computes: openssl's. */
function opensslHmacSha1(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', secret], { input: body });
  return out.toString().trim().split('= ').pop() ?? '';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('dispatcher: signed POSTs, outcomes, retry tiers, dead letters (ladder 1s,2s; window 8 s; timeout 1 s)', () => {
  const harness = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];
  let certs: TestCertificates;

  async function receiver(tls?: { key: string; cert: string }): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver(tls).start();
    receivers.push(r);
    return r;
  }

  beforeAll(async () => {
    certs = makeTestCertificates();
    await harness.start({ DISPATCHER_EXTRA_CA_FILE: certs.caFile });
  });

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await harness.close();
    certs?.remove();
  });

  /** A fresh source with a destination whose webhooks are these URLs. */
  async function destinationFor(
    urls: string[],
    extra: { secret?: string; headers?: Record<string, string> } = {},
  ) {
    const own = await harness.source();
    const destination = await harness.webhookDestination(own.id, { urls, ...extra });
    return { source: own, destination };
  }

  it('POSTs the exact bytes the router produced, signed (verified by openssl), with static headers and User-Agent', async () => {
    const sink = await receiver();
    const { source: own } = await destinationFor([sink.url('/signed?x=1')], {
      secret: 'wh-secret-ü-1',
      headers: { 'X-Tenant': 'acme', Authorization: 'Bearer static-token' },
    });
    const messageId = await harness.track(own.writeKey, randomUUID(), {
      properties: { total: 12.5, note: 'héllo' },
    });
    const [request] = await sink.received(1);
    const delivery = await harness.delivery(messageId);
    expect(request.body.equals(delivery.value!)).toBe(true);
    expect(request.path).toBe('/signed?x=1');
    expect(request.headers['x-signature']).toBe(opensslHmacSha1('wh-secret-ü-1', request.body));
    expect(request.headers['user-agent']).toBe('Sluice/1.0');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-tenant']).toBe('acme');
    expect(request.headers.authorization).toBe('Bearer static-token');
  });

  it('sends no X-Signature when the destination has no shared secret', async () => {
    const sink = await receiver();
    const { source: own } = await destinationFor([sink.url()]);
    await harness.track(own.writeKey, randomUUID());
    const [request] = await sink.received(1);
    expect(request.headers['x-signature']).toBeUndefined();
  });

  it('five webhooks, four failing and one succeeding: one attempt each, no retry', async () => {
    const sinks = await Promise.all([1, 2, 3, 4, 5].map(() => receiver()));
    const answers = [500, 404, 503, 200, 429];
    sinks.forEach((s, i) => (s.answer = () => ({ status: answers[i] })));
    const { source: own } = await destinationFor(sinks.map((s) => s.url()));
    const messageId = await harness.track(own.writeKey, randomUUID());
    await Promise.all(sinks.map((s) => s.received(1)));
    await sleep(3_000); // longer than the first tier: a retry would have come by now
    expect(sinks.map((s) => s.requests.length)).toEqual([1, 1, 1, 1, 1]);
    expect(harness.outbound.withHeader(retryTopic(1), HEADER.messageId, messageId)).toHaveLength(0);
    expect(
      harness.outbound.withHeader(TOPIC.deliveriesDead, HEADER.messageId, messageId),
    ).toHaveLength(0);
  });

  it('all failing with 500: retried through the ladder with gaps following the tiers, then dead when the window closes', async () => {
    const a = await receiver();
    const b = await receiver();
    a.answer = () => ({ status: 500 });
    b.answer = () => ({ status: 502 });
    const { source: own } = await destinationFor([a.url(), b.url()]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [dead] = await harness.outboundOf(TOPIC.deliveriesDead, messageId, 1, 30_000);
    // Attempts at about 0, 1, 3, 5, 7 s; the next would be at 9 s, after the 8 s window.
    expect(a.requests).toHaveLength(5);
    expect(b.requests).toHaveLength(5);
    const gaps = a.requests.slice(1).map((r, i) => r.at - a.requests[i].at);
    const tiers = [1_000, 2_000, 2_000, 2_000];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(tiers[i] - 50);
      expect(gap).toBeLessThan(tiers[i] + 1_500);
    });
    expect(headerText(dead, HEADER.reason)).toBe('retry_window_closed');
    expect(headerText(dead, HEADER.attempt)).toBe('5');
    expect(['500', '502']).toContain(headerText(dead, HEADER.lastStatus));
    expect(Number(headerText(dead, HEADER.lastAttemptAt))).toBeGreaterThan(
      Number(headerText(dead, HEADER.firstAttemptAt)),
    );
    expect(dead.value!.equals((await harness.delivery(messageId)).value!)).toBe(true);
    const retries = [
      ...harness.outbound.withHeader(retryTopic(1), HEADER.messageId, messageId),
      ...harness.outbound.withHeader(retryTopic(2), HEADER.messageId, messageId),
    ];
    expect(retries).toHaveLength(4);
    expect(
      new Set(retries.map((r) => headerText(r, HEADER.webhookIds)?.split(',').length)),
    ).toEqual(new Set([2]));
  });

  it('404: dead at once with the status and a reason', async () => {
    const sink = await receiver();
    sink.answer = () => ({ status: 404 });
    const { source: own } = await destinationFor([sink.url()]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [dead] = await harness.outboundOf(TOPIC.deliveriesDead, messageId);
    expect(headerText(dead, HEADER.reason)).toBe('http_4xx');
    expect(headerText(dead, HEADER.lastStatus)).toBe('404');
    expect(headerText(dead, HEADER.attempt)).toBe('1');
    await sleep(1_500);
    expect(sink.requests).toHaveLength(1);
  });

  it('429 with Retry-After: 2 goes to the 2 s tier, and the retry succeeds', async () => {
    const sink = await receiver();
    sink.answer = (_r, i) =>
      i === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 };
    const { source: own } = await destinationFor([sink.url()]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [first, second] = await sink.received(2);
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_950);
    const [retry] = await harness.outboundOf(retryTopic(2), messageId);
    expect(headerText(retry, HEADER.reason)).toBe('http_429');
    expect(harness.outbound.withHeader(retryTopic(1), HEADER.messageId, messageId)).toHaveLength(0);
  });

  it('a receiver that never answers: timed out at the deadline and retried', async () => {
    const sink = await receiver();
    sink.answer = (_r, i) => (i === 0 ? 'hang' : { status: 200 });
    const { source: own } = await destinationFor([sink.url()]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [retry] = await harness.outboundOf(retryTopic(1), messageId);
    expect(headerText(retry, HEADER.reason)).toBe('timeout');
    expect(headerText(retry, HEADER.attempt)).toBe('2');
    const [first, second] = await sink.received(2);
    // The 1 s deadline, then the 1 s tier.
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_900);
    expect(
      await harness.dispatcherMetric('sluice_dispatcher_attempts_total', {
        outcome: 'retryable',
        status_class: 'none',
      }),
    ).toBeGreaterThan(0);
  });

  it('an HTTPS receiver with a self-signed certificate sees no request; the delivery is dead with a TLS reason', async () => {
    const sink = await receiver(certs.selfSigned);
    const { source: own } = await destinationFor([sink.url('/hook', 'localhost')]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [dead] = await harness.outboundOf(TOPIC.deliveriesDead, messageId);
    expect(headerText(dead, HEADER.reason)).toBe('tls_error');
    expect(sink.requests).toHaveLength(0);
    expect(sink.connections).toBe(0);
    expect(sink.tcpConnections).toBeGreaterThan(0);
  });

  it('an HTTPS receiver whose certificate a test CA signed, trusted through the extra-CA setting, receives its deliveries', async () => {
    const sink = await receiver(certs.signed);
    const { source: own } = await destinationFor([sink.url('/tls', 'localhost')], { secret: 's' });
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [request] = await sink.received(1);
    expect(JSON.parse(request.body.toString())).toMatchObject({ messageId, type: 'track' });
    expect(request.headers['x-signature']).toBe(opensslHmacSha1('s', request.body));
  });

  it('a webhook edited in place during the retry window: the next attempt goes to the new URL', async () => {
    const old = await receiver();
    const fixed = await receiver();
    old.answer = () => ({ status: 503 });
    const { source: own, destination } = await destinationFor([old.url()]);
    const messageId = await harness.track(own.writeKey, randomUUID());
    await old.received(1);
    await harness.sql('UPDATE webhook SET url = $1 WHERE destination_id = $2', [
      fixed.url('/new'),
      destination.id,
    ]);
    await harness.dispatcherSees(destination.id, (d) => d?.webhooks[0]?.url === fixed.url('/new'));
    const [request] = await fixed.received(1);
    expect(JSON.parse(request.body.toString())).toMatchObject({ messageId });
    expect(old.requests).toHaveLength(1);
  });

  it('a destination disabled during the retry window: the delivery is discarded and counted', async () => {
    const sink = await receiver();
    sink.answer = () => ({ status: 500 });
    const { source: own, destination } = await destinationFor([sink.url()]);
    const before = await harness.dispatcherMetric('sluice_dispatcher_deliveries_discarded_total', {
      reason: 'destination_disabled',
    });
    await harness.track(own.writeKey, randomUUID());
    await sink.received(1);
    await harness.sql('UPDATE destination SET enabled = false WHERE id = $1', [destination.id]);
    await harness.dispatcherSees(destination.id, (d) => d?.enabled === false);
    await eventuallyMetric(
      () =>
        harness.dispatcherMetric('sluice_dispatcher_deliveries_discarded_total', {
          reason: 'destination_disabled',
        }),
      before + 1,
    );
    await sleep(2_500);
    expect(sink.requests).toHaveLength(1);
  });

  it('publishes the outcome of a delete notification', async () => {
    const sink = await receiver();
    const { source: own, destination } = await destinationFor([sink.url()], { secret: 'del' });
    const notificationId = randomUUID();
    const body = JSON.stringify({
      type: 'delete',
      userId: 'gone-1',
      timestamp: '2026-11-22T00:00:00.000Z',
    });
    await harness.publishCalls([
      {
        key: `${own.id}:gone-1`,
        value: body,
        headers: {
          [HEADER.sourceId]: own.id,
          [HEADER.callType]: 'delete',
          [HEADER.messageId]: notificationId,
        },
      },
    ]);
    const [request] = await sink.received(1);
    expect(request.body.toString()).toBe(body);
    const [found] = await harness.outboundOf(TOPIC.deliveryOutcomes, notificationId);
    expect(JSON.parse(found.value!.toString())).toMatchObject({
      messageId: notificationId,
      sourceId: own.id,
      destinationId: destination.id,
      type: 'delete',
      result: 'delivered',
      attempts: 1,
    });
    expect(found.key!.toString()).toBe(`${destination.id}:gone-1`);
  });
});

describe('dispatcher without an allow-list (the SSRF guard)', () => {
  const harness = new DispatcherHarness();
  let sink: WebhookReceiver;

  beforeAll(async () => {
    await harness.start({ DISPATCHER_ALLOWED_CIDRS: '' });
    sink = await new WebhookReceiver().start();
  });

  afterAll(async () => {
    await sink?.stop();
    await harness.close();
  });

  it.each([
    ['an IP literal', '127.0.0.1'],
    ['a name resolving to loopback', 'localhost'],
  ])('refuses %s: no connection is made, the delivery is dead', async (_what, host) => {
    const own = await harness.source();
    await harness.webhookDestination(own.id, { urls: [sink.url('/hook', host)] });
    const messageId = await harness.track(own.writeKey, randomUUID());
    const [dead] = await harness.outboundOf(TOPIC.deliveriesDead, messageId);
    expect(headerText(dead, HEADER.reason)).toBe('ssrf_refused');
    expect(sink.connections).toBe(0);
    expect(sink.requests).toHaveLength(0);
  });
});

async function eventuallyMetric(read: () => Promise<number>, atLeast: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (value >= atLeast) return;
    if (Date.now() > deadline)
      throw new Error(`metric stayed at ${value}, expected at least ${atLeast}`);
    await sleep(200);
  }
}
