import { randomUUID } from 'node:crypto';

import { ChildDispatcher } from '../../helpers/child-dispatcher';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';

const CALLS = 1_200;
const MAX_CALLS = 500;

/** The message ids of one batch request's JSON array body. */
function idsOf(request: ReceivedRequest): string[] {
  return (JSON.parse(request.body.toString()) as { messageId: string }[]).map((c) => c.messageId);
}

/**
 * A batching destination's dispatcher killed with SIGKILL while a batch is half formed, then
 * started again: every call reaches the receiver (the half-formed batch lived only in memory,
 * and none of its offsets was committed). The dispatcher runs as a child process built the way
 * `npm run build` builds it.
 */
describe('batching dispatcher killed with SIGKILL mid-run and restarted', () => {
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

  it('loses no call of the batches formed, sent or half formed at the kill', async () => {
    const source = await harness.source();
    const destination = await harness.webhookDestination(source.id, {
      urls: [sink.url()],
      enabled: false,
    });
    // Two full batches go at once; the last 200 calls wait 15 s for more.
    await harness.sql(
      `UPDATE destination SET batch_max_calls = $1, batch_max_bytes = 16777216,
       batch_max_wait_ms = 15000, enabled = true WHERE id = $2`,
      [MAX_CALLS, destination.id],
    );
    await harness.routerSeesDestination(destination.id, (d) => d?.enabled === true);
    const ids: string[] = [];
    for (let batch = 0; batch < CALLS / 100; batch += 1) {
      const calls = Array.from({ length: 100 }, (_, i) => {
        const messageId = `bcrash-${batch}-${i}-${randomUUID()}`;
        ids.push(messageId);
        return { type: 'track', userId: `u-${i % 17}`, event: 'Load', messageId };
      });
      const answer = await harness.post('/v1/batch', { batch: calls }, { basic: source.writeKey });
      expect(answer.status).toBe(200);
    }
    // Every delivery is on the topic before the dispatcher reads any.
    await harness.settled();
    dispatcher.start(harness.dispatcherEnv);
    await sink.received(2, 60_000);
    await dispatcher.stop('SIGKILL');
    const beforeKill = sink.requests.flatMap(idsOf);
    expect(beforeKill.length).toBeLessThan(CALLS);

    dispatcher.start(harness.dispatcherEnv);
    const seen = await eventually(
      () => {
        const got = new Set(sink.requests.flatMap(idsOf));
        return ids.every((id) => got.has(id)) ? got : undefined;
      },
      120_000,
      `all ${CALLS} message ids at the webhook`,
    );
    expect(seen.size).toBe(CALLS);
    for (const request of sink.requests)
      expect(idsOf(request).length).toBeLessThanOrEqual(MAX_CALLS);
  });
});
