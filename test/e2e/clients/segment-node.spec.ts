import { createHmac } from 'node:crypto';

import { Analytics } from '@segment/analytics-node';

import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

type Json = Record<string, any>;

/** What the library tells its `http_request` and `error` listeners. */
interface Observed {
  readonly requests: { url: string; headers: Record<string, string>; body: string }[];
  readonly errors: { code: string; reason?: unknown }[];
}

/**
 * Segment's own Node library, unchanged, pointed at ingest. The option names are the
 * library's: `host` ("The base URL of the API. Default: https://api.segment.io") and `path`
 * ("The API path route. Default: /v1/batch") are documented in segmentio/analytics-next,
 * packages/node/src/app/settings.ts (`AnalyticsSettings`), and joined into the request URL
 * by packages/node/src/lib/create-url.ts; `flushAt`, `flushInterval` and `maxRetries` come
 * from the same interface. Only `host` is needed: the default `path` is ingest's.
 */
function segmentClient(writeKey: string, host: string): { analytics: Analytics } & Observed {
  const analytics = new Analytics({ writeKey, host, flushAt: 6, flushInterval: 60_000 });
  const observed: Observed = { requests: [], errors: [] };
  analytics.on('http_request', (request) => observed.requests.push(request));
  analytics.on('error', (error) => observed.errors.push(error));
  return { analytics, ...observed };
}

/** HMAC-SHA1 of the exact body by Node's crypto, not by the project's signing library. */
const hmacSha1 = (secret: string, body: Buffer): string =>
  createHmac('sha1', secret).update(body).digest('hex');

describe('Segment’s Node library (@segment/analytics-node) to a webhook', () => {
  const harness = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    await harness.start();
  });

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await harness.close();
  });

  it('delivers track, identify, page, screen, group and alias, each signed, with version 1 and the fields the library sent', async () => {
    const sink = await new WebhookReceiver().start();
    receivers.push(sink);
    const source = await harness.source();
    const secret = 'segment-node-secret';
    await harness.webhookDestination(source.id, { urls: [sink.url()], secret });
    const { analytics, requests, errors } = segmentClient(source.writeKey, harness.url);
    const started = Date.now();

    // Each call must arrive with the fields given here, as given.
    const track = { userId: 'sn-u1', event: 'Order Completed', properties: { total: 12.5, n: 1 } };
    const identify = { userId: 'sn-u1', traits: { plan: 'pro', email: 'ada@example.com' } };
    const page = { userId: 'sn-u1', category: 'Docs', name: 'Pricing', properties: { path: '/p' } };
    const screen = { anonymousId: 'sn-a1', name: 'Home', properties: { tab: 'feed' } };
    const group = { userId: 'sn-u1', groupId: 'sn-g1', traits: { seats: 3 } };
    const alias = { userId: 'sn-u1', previousId: 'sn-a1' };
    analytics.track(track);
    analytics.identify(identify);
    analytics.page(page);
    analytics.screen(screen);
    analytics.group(group);
    analytics.alias(alias);
    const given: Record<string, Json> = { track, identify, page, screen, group, alias };
    await analytics.closeAndFlush({ timeout: 20_000 });
    expect(errors).toEqual([]);

    // One batch, where `host` and the default `path` say, authenticated as ingest expects.
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.url).toBe(`${harness.url}/v1/batch`);
    expect(request.headers.Authorization).toBe(
      `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
    );
    const { batch: sent, sentAt: batchSentAt } = JSON.parse(request.body) as {
      batch: Json[];
      sentAt: string;
    };
    expect(sent.map((call) => String(call.type)).sort()).toEqual(Object.keys(given).sort());
    const sentById = new Map(sent.map((call) => [call.messageId as string, call]));

    const arrived = await sink.received(sent.length, 30_000);
    expect(arrived).toHaveLength(sent.length);
    for (const webhook of arrived) {
      expect(webhook.headers['x-signature']).toBe(hmacSha1(secret, webhook.body));
      const body = JSON.parse(webhook.body.toString()) as Json;
      const call = sentById.get(body.messageId);
      expect(call).toBeDefined();
      sentById.delete(body.messageId);
      expect(body).toMatchObject({ type: call!.type, ...given[call!.type] });
      expect(body.context.library).toEqual({ name: '@segment/analytics-node', version: '3.1.0' });

      // Exactly what the library sent, plus ingest's enrichment and nothing else.
      const { timestamp, originalTimestamp, receivedAt, sentAt, ...rest } = body;
      const { timestamp: sentTimestamp, ...sentRest } = call!;
      expect(rest).toEqual({
        ...sentRest,
        context: { ...sentRest.context, ip: '127.0.0.1' },
        version: 1,
      });
      // The call's own time, kept as sent or corrected for clock skew with the batch's sentAt
      // (the library puts it on the batch only), the original kept.
      expect(originalTimestamp ?? timestamp).toBe(sentTimestamp);
      expect(sentAt ?? batchSentAt).toBe(batchSentAt);
      expect(Date.parse(timestamp as string)).toBeGreaterThanOrEqual(started - 1_000);
      expect(Date.parse(receivedAt as string)).toBeGreaterThanOrEqual(started);
      expect(Date.parse(receivedAt as string)).toBeLessThanOrEqual(Date.now());
    }
    expect([...sentById.keys()]).toEqual([]);
  });

  it('reports a write key ingest does not know as a failed delivery, without retrying', async () => {
    const { analytics, requests, errors } = segmentClient('not-a-known-write-key', harness.url);
    analytics.track({ userId: 'sn-x', event: 'Refused' });
    await analytics.closeAndFlush({ timeout: 20_000 });
    expect(requests).toHaveLength(1);
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'delivery_failure',
        reason: new Error('[401] Unauthorized'),
      }),
    ]);
  });
});
