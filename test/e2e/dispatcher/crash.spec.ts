import { randomUUID } from 'node:crypto';

import { ChildDispatcher } from '../../helpers/child-dispatcher';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

const CALLS = 1_200;

/**
 * The dispatcher killed with SIGKILL in the middle of a load, then started again: every
 * message id reaches the webhook at least once. The dispatcher runs as a child process built
 * the way `npm run build` builds it (SWC), into a directory of its own.
 */
describe('dispatcher killed with SIGKILL mid-load and restarted', () => {
  const harness = new DispatcherHarness();
  let sink: WebhookReceiver;
  const dispatcher = new ChildDispatcher();

  beforeAll(async () => {
    dispatcher.build();
    await harness.start({}, false);
    sink = await new WebhookReceiver().start();
  });

  afterAll(async () => {
    await dispatcher.close();
    await sink?.stop();
    await harness.close();
  });

  it('delivers every message id at least once', async () => {
    const source = await harness.source();
    await harness.webhookDestination(source.id, { urls: [sink.url()] });
    dispatcher.start(harness.dispatcherEnv);
    const ids: string[] = [];
    for (let batch = 0; batch < CALLS / 100; batch += 1) {
      const calls = Array.from({ length: 100 }, (_, i) => {
        const messageId = `crash-${batch}-${i}-${randomUUID()}`;
        ids.push(messageId);
        return { type: 'track', userId: `u-${i % 17}`, event: 'Load', messageId };
      });
      const answer = await harness.post('/v1/batch', { batch: calls }, { basic: source.writeKey });
      expect(answer.status).toBe(200);
    }
    await sink.received(150, 60_000);
    await dispatcher.stop('SIGKILL');
    const beforeRestart = sink.requests.length;
    dispatcher.start(harness.dispatcherEnv);
    const seen = await eventually(
      () => {
        const got = new Set(
          sink.requests.map(
            (r) => (JSON.parse(r.body.toString()) as { messageId: string }).messageId,
          ),
        );
        return ids.every((id) => got.has(id)) ? got : undefined;
      },
      60_000,
      `all ${CALLS} message ids at the webhook`,
    );
    expect(seen.size).toBe(CALLS);
    expect(beforeRestart).toBeLessThan(CALLS);
    // At least once: a redelivery after the kill is allowed, a missing id is not.
    expect(sink.requests.length).toBeGreaterThanOrEqual(CALLS);
  });
});
