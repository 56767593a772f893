import { Analytics } from '@app/client';

import { describeFailure, runGo } from '../../../libs/analytics-go/go-command';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

const CALLS = 120;
/** Compiling the Go program on a busy machine takes a while. */
const GO_RUN_TIMEOUT_MS = 240_000;

/** Both client libraries through the whole pipeline: ingest, router, dispatcher, a webhook. */
describe('client libraries to a webhook', () => {
  const harness = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    // What is tested is that every call arrives, not the retry ladder: on a loaded machine the
    // harness's 1 s deadline and 8 s retry window could make a slow answer a dead letter.
    await harness.start({
      DISPATCHER_REQUEST_TIMEOUT_MS: '5000',
      DISPATCHER_RETRY_WINDOW_SECONDS: '120',
    });
  });

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await harness.close();
  });

  /** A source whose destination posts to a receiver of its own. */
  async function pipeline(): Promise<{ writeKey: string; sink: WebhookReceiver }> {
    const sink = await new WebhookReceiver().start();
    receivers.push(sink);
    const source = await harness.source();
    await harness.webhookDestination(source.id, { urls: [sink.url()], secret: 'clients' });
    return { writeKey: source.writeKey, sink };
  }

  it('TypeScript: every call sent before close() reaches the webhook', async () => {
    const { writeKey, sink } = await pipeline();
    const analytics = new Analytics({ writeKey, endpoint: harness.url, flushAt: 25 });
    const ids = Array.from({ length: CALLS }, (_, i) =>
      analytics.track({ userId: `ts-${i % 7}`, event: 'Client E2E', properties: { i } }),
    );
    await analytics.close();
    const requests = await sink.received(CALLS, 30_000);
    const arrived = new Set(
      requests.map((r) => (JSON.parse(r.body.toString()) as { messageId: string }).messageId),
    );
    expect(ids.filter((id) => !arrived.has(id))).toEqual([]);
  });

  it('Go: every call sent before Close() reaches the webhook', async () => {
    const { writeKey, sink } = await pipeline();
    const args = [
      'run',
      './internal/bench',
      '-endpoint',
      harness.url,
      '-writekey',
      writeKey,
      '-n',
      String(CALLS),
    ];
    const result = await runGo(args, GO_RUN_TIMEOUT_MS);
    if (result.code !== 0) throw new Error(describeFailure(args, result));
    const requests = await sink.received(CALLS, 30_000);
    const bodies = requests.map((r) => JSON.parse(r.body.toString()) as Record<string, unknown>);
    expect(new Set(bodies.map((b) => b.messageId)).size).toBe(CALLS);
    expect(bodies.every((b) => b.event === 'Order Completed' && b.type === 'track')).toBe(true);
  });
});
