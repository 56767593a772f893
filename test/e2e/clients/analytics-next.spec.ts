import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';

import { BrowserContext } from 'playwright-core';

import { launchChromium, TestBrowser } from '../../helpers/browser';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually, scrapeMetric } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

type Json = Record<string, any>;

/**
 * Segment's browser library, unchanged, in a real headless Chromium (Debian's package, which
 * docker/local/tools.sh installs): the page comes from one origin, ingest is another. The
 * library is the npm package's own UMD bundle (dist/umd/index.js, `window.AnalyticsNext`),
 * served by the page's server: no CDN. Set up with the documented options only:
 * `AnalyticsBrowser.load({ writeKey, cdnURL })`, and for batching the `Segment.io`
 * integration's `deliveryStrategy` (the library's README, "Batching").
 */
const BUNDLE = join(
  dirname(require.resolve('@segment/analytics-next/package.json')),
  'dist/umd/index.js',
);

const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<script src="/analytics-next.js"></script></head>
<body><h1>Shop</h1></body></html>`;

const SECRET = 'browser-secret';

/** HMAC-SHA1 of the exact body by Node's crypto, not by the project's signing library. */
const hmacSha1 = (body: Buffer): string => createHmac('sha1', SECRET).update(body).digest('hex');

/** A web server for the shop's page and the library's bundle, on a port of its own. */
async function startPageServer(): Promise<Server> {
  const bundle = readFileSync(BUNDLE);
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE_HTML);
    } else if (req.url === '/analytics-next.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** What the page reports of its calls. */
interface PageCalls {
  readonly calls: { type: string; messageId: string; failed?: string }[];
  readonly error?: string;
}

/** The parts of a call's context the page reads. */
interface CallContext {
  readonly event: { type: string; messageId: string };
  failedDelivery(): { reason: unknown } | undefined;
}

/** The parts of analytics-next's `AnalyticsBrowser` the page uses. */
interface BufferedAnalytics extends PromiseLike<unknown> {
  page(name: string, properties: Json): Promise<CallContext>;
  track(event: string, properties?: Json): Promise<CallContext>;
  identify(userId: string, traits: Json): Promise<CallContext>;
  group(groupId: string, traits: Json): Promise<CallContext>;
  alias(to: string, from: string): Promise<CallContext>;
}

/** `window.AnalyticsNext`, as the UMD bundle defines it. */
interface AnalyticsNextGlobal {
  readonly AnalyticsNext: {
    readonly AnalyticsBrowser: { load(settings: Json, options?: Json): BufferedAnalytics };
  };
}

/**
 * Runs in the page: loads the library pointed at ingest, makes one call of each type the
 * browser library has, and reports their message ids, or why the library did not load.
 */
async function callEveryType(args: {
  writeKey: string;
  cdnURL: string;
  options: Json;
}): Promise<PageCalls> {
  const { AnalyticsBrowser } = (globalThis as unknown as AnalyticsNextGlobal).AnalyticsNext;
  const analytics = AnalyticsBrowser.load(
    { writeKey: args.writeKey, cdnURL: args.cdnURL },
    args.options,
  );
  const made = [
    analytics.page('Pricing', { plan: 'pro' }),
    analytics.track('Signed Up', { plan: 'pro' }),
    analytics.identify('u-42', { email: 'ada@example.com' }),
    analytics.group('g-1', { name: 'ACME' }),
    analytics.alias('u-42', 'anon-previous'),
  ];
  try {
    // The calls wait for loading; a library that cannot load leaves them waiting.
    await analytics;
  } catch (error) {
    return { calls: [], error: String(error) };
  }
  const contexts = await Promise.all(made);
  return {
    calls: contexts.map((ctx) => ({
      type: ctx.event.type,
      messageId: ctx.event.messageId,
      failed: ctx.failedDelivery() ? String(ctx.failedDelivery()?.reason) : undefined,
    })),
  };
}

describe('Segment’s browser library (@segment/analytics-next) in headless Chromium', () => {
  const harness = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];
  let pageServer: Server;
  let pageOrigin: string;
  let browser: TestBrowser;
  let context: BrowserContext;
  /** Every URL the browser requested (preflights excepted: Chromium does not report them). */
  const requested: string[] = [];

  beforeAll(async () => {
    await harness.start();
    pageServer = await startPageServer();
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    browser = await launchChromium();
    context = browser.context;
    context.on('request', (request) => requested.push(request.url()));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pageServer?.close(resolve));
    await Promise.all(receivers.map((r) => r.stop()));
    await harness.close();
  });

  /** A source whose signed webhook destination posts to a receiver of its own. */
  async function site(allowedOrigins: string[] = []) {
    const sink = await new WebhookReceiver().start();
    receivers.push(sink);
    const source = await harness.source();
    if (allowedOrigins.length > 0) {
      await harness.sql('UPDATE source SET allowed_origins = $1 WHERE id = $2', [
        allowedOrigins,
        source.id,
      ]);
    }
    await harness.webhookDestination(source.id, { urls: [sink.url()], secret: SECRET });
    return { ...source, sink };
  }

  /** Opens the shop's page and runs {@link callEveryType} in it. */
  async function inPage(writeKey: string, options: Json = {}): Promise<PageCalls> {
    const page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    try {
      return await page.evaluate(callEveryType, { writeKey, cdnURL: harness.url, options });
    } finally {
      await page.close();
    }
  }

  /** The webhook bodies of these calls, once all arrived, each checked signed. */
  async function delivered(sink: WebhookReceiver, calls: PageCalls['calls']): Promise<Json[]> {
    const requests = await sink.received(calls.length, 30_000);
    for (const request of requests) {
      expect(request.headers['x-signature']).toBe(hmacSha1(request.body));
    }
    const bodies = requests.map((r) => JSON.parse(r.body.toString('utf8')) as Json);
    const byId = new Map(bodies.map((body) => [body.messageId as string, body]));
    return calls.map((call) => byId.get(call.messageId) ?? { missing: call.messageId });
  }

  /** A metric of ingest's `/metrics`. */
  const ingestMetric = (name: string, labels: Record<string, string>) =>
    scrapeMetric(harness.url, name, labels);

  it('delivers page, track, identify, group and alias to the webhook, signed, version 1', async () => {
    const shop = await site();
    const preflights = await ingestMetric('sluice_ingest_requests_total', {
      route: 'preflight',
      status: '204',
    });
    const result = await inPage(shop.writeKey);
    expect(result.error).toBeUndefined();
    expect(result.calls.map((call) => [call.type, call.failed])).toEqual([
      ['page', undefined],
      ['track', undefined],
      ['identify', undefined],
      ['group', undefined],
      ['alias', undefined],
    ]);
    const [page, track, identify, group, alias] = await delivered(shop.sink, result.calls);
    expect(page).toMatchObject({ version: 1, type: 'page', name: 'Pricing' });
    expect(page.properties).toMatchObject({ plan: 'pro', url: `${pageOrigin}/`, path: '/' });
    expect(track).toMatchObject({ version: 1, type: 'track', event: 'Signed Up' });
    expect(identify).toMatchObject({ version: 1, type: 'identify', userId: 'u-42' });
    expect(identify.traits).toMatchObject({ email: 'ada@example.com' });
    expect(group).toMatchObject({ version: 1, type: 'group', groupId: 'g-1' });
    expect(alias).toMatchObject({
      version: 1,
      type: 'alias',
      userId: 'u-42',
      previousId: 'anon-previous',
    });
    for (const body of [page, track, identify, group, alias]) {
      expect(body).not.toHaveProperty('writeKey');
      expect(body.context.library.name).toBe('analytics.js');
    }
    // Each call carried Authorization, so Chromium asked first.
    const after = await ingestMetric('sluice_ingest_requests_total', {
      route: 'preflight',
      status: '204',
    });
    expect(after).toBeGreaterThan(preflights);
    const shortRoutes = await Promise.all(
      ['p', 't', 'i', 'g', 'a'].map((route) =>
        ingestMetric('sluice_ingest_requests_total', { route, status: '200' }),
      ),
    );
    expect(shortRoutes.every((count) => count >= 1)).toBe(true);
  });

  it('delivers them with the batching strategy, through /v1/b', async () => {
    const shop = await site();
    const batches = await ingestMetric('sluice_ingest_requests_total', {
      route: 'b',
      status: '200',
    });
    const result = await inPage(shop.writeKey, {
      integrations: {
        'Segment.io': {
          deliveryStrategy: { strategy: 'batching', config: { size: 5, timeout: 200 } },
        },
      },
    });
    expect(result.error).toBeUndefined();
    const bodies = await delivered(shop.sink, result.calls);
    expect(bodies.map((body): unknown[] => [body.type, body.version])).toEqual([
      ['page', 1],
      ['track', 1],
      ['identify', 1],
      ['group', 1],
      ['alias', 1],
    ]);
    // The batch's sentAt dated every call (the library strips each call's own).
    for (const body of bodies) expect(body.sentAt).toEqual(expect.any(String));
    expect(
      await ingestMetric('sluice_ingest_requests_total', { route: 'b', status: '200' }),
    ).toBeGreaterThan(batches);
  });

  it('refuses a page whose origin the source does not allow: nothing is delivered', async () => {
    const shop = await site(['https://shop.example.com']);
    const refusals = () =>
      ingestMetric('sluice_ingest_calls_rejected_total', { reason: 'origin_not_allowed' });
    const refusedBefore = await refusals();
    // Through the settings document: the page may not read it, and the library cannot load.
    const viaSettings = await inPage(shop.writeKey);
    expect(viaSettings.calls).toEqual([]);
    expect(viaSettings.error).toEqual(expect.any(String));
    // With the settings given inline (the `cdnSettings` option), the calls themselves are
    // refused: ingest answers 403 without letting the page read it, and stores nothing.
    const settings = await (
      await fetch(`${harness.url}/v1/projects/${shop.writeKey}/settings`)
    ).json();
    const page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    await page.evaluate(
      ({ writeKey, cdnSettings }) => {
        const { AnalyticsBrowser } = (globalThis as unknown as AnalyticsNextGlobal).AnalyticsNext;
        void AnalyticsBrowser.load({ writeKey, cdnSettings }).track('Refused');
      },
      { writeKey: shop.writeKey, cdnSettings: settings as Json },
    );
    await eventually(
      async () => ((await refusals()) > refusedBefore ? true : undefined),
      30_000,
      'a refused call at ingest',
    );
    await page.close();
    // A call from a server (no Origin) goes through and is the only one delivered.
    await harness.track(shop.writeKey, 'marker-after-refusals');
    const [only] = await shop.sink.received(1);
    expect(JSON.parse(only.body.toString('utf8')).messageId).toBe('marker-after-refusals');
    expect(shop.sink.requests).toHaveLength(1);
  });

  it('made the browser request nothing but the page and ingest', () => {
    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect([...origins].sort()).toEqual([harness.url, pageOrigin].sort());
  });
});
