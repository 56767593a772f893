import { createHmac, randomUUID } from 'node:crypto';

import { parseDeliveryOutcomes, TOPIC } from '@app/contracts';

import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';

const SECRET = 'batching-e2e-secret';

/** The message ids of one batch request's JSON array body. */
function idsOf(request: ReceivedRequest): string[] {
  const calls = JSON.parse(request.body.toString()) as { messageId: string }[];
  expect(Array.isArray(calls)).toBe(true);
  return calls.map((call) => call.messageId);
}

/**
 * Batched delivery through ingest, the router and the dispatcher against the real broker and
 * PostgreSQL, to a real local receiver that checks each request's signature.
 */
describe('batched delivery', () => {
  const harness = new DispatcherHarness();
  let sink: WebhookReceiver;

  beforeAll(async () => {
    await harness.start();
    sink = await new WebhookReceiver().start();
  });

  afterAll(async () => {
    await sink?.stop();
    await harness.close();
  });

  beforeEach(() => {
    sink.requests.length = 0;
    sink.answer = () => ({ status: 200 });
  });

  /** A new source with one enabled batching destination posting to the sink. */
  async function batchingSource(maxCalls: number, maxWaitMs: number, path = '/hook') {
    const source = await harness.source();
    const destination = await harness.webhookDestination(source.id, {
      urls: [sink.url(path)],
      secret: SECRET,
      enabled: false,
    });
    await harness.sql(
      `UPDATE destination SET batch_max_calls = $1, batch_max_bytes = 16777216,
       batch_max_wait_ms = $2, enabled = true WHERE id = $3`,
      [maxCalls, maxWaitMs, destination.id],
    );
    await harness.routerSeesDestination(destination.id, (d) => d?.enabled === true);
    await harness.dispatcherSees(destination.id, (d) => d?.batching?.maxCalls === maxCalls);
    return { source, destination };
  }

  /** Sends `count` track calls of 50 users through /v1/batch, 100 a request; their ids. */
  async function send(writeKey: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 100) {
      const batch = Array.from({ length: Math.min(100, count - start) }, (_, i) => {
        const messageId = `b-${start + i}-${randomUUID()}`;
        ids.push(messageId);
        return { type: 'track', userId: `u-${(start + i) % 50}`, event: 'Load', messageId };
      });
      const answer = await harness.post('/v1/batch', { batch }, { basic: writeKey });
      expect(answer.status).toBe(200);
    }
    return ids;
  }

  it('delivers 10,000 calls in at most 21 signed requests of 500, every call once', async () => {
    const { source } = await batchingSource(500, 10_000);
    const ids = await send(source.writeKey, 10_000);
    const seen = await eventually(
      () => {
        const got = sink.requests.flatMap(idsOf);
        return got.length >= ids.length ? got : undefined;
      },
      90_000,
      'every call at the receiver',
    );
    expect(sink.requests.length).toBeLessThanOrEqual(21);
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen)).toEqual(new Set(ids));
    for (const request of sink.requests) {
      expect(idsOf(request).length).toBeLessThanOrEqual(500);
      const expected = createHmac('sha1', SECRET).update(request.body).digest('hex');
      expect(request.headers['x-signature']).toBe(expected);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-sluice-batch-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('retries a batch answered 500 and delivers each of its calls once', async () => {
    const { source, destination } = await batchingSource(50, 2_000);
    sink.answer = (_request, index) => ({ status: index === 0 ? 500 : 200 });
    const ids = await send(source.writeKey, 50);
    await sink.received(2, 30_000);
    const delivered = await eventually(
      () => {
        const got = sink.requests.slice(1).flatMap(idsOf);
        return got.length >= ids.length ? got : undefined;
      },
      30_000,
      'every call in a request answered 200',
    );
    expect(idsOf(sink.requests[0]).sort()).toEqual([...ids].sort());
    // Delivered once: in the 2xx-answered requests each call is there exactly once.
    expect(delivered.sort()).toEqual([...ids].sort());
    const failedBatch = sink.requests[0].headers['x-sluice-batch-id'];
    const retriedBatches = new Set(
      sink.requests.slice(1).map((r) => r.headers['x-sluice-batch-id']),
    );
    expect(retriedBatches.has(failedBatch)).toBe(false);

    // Each call's ledger outcomes name the batch it travelled in, for each attempt.
    const outcomes = await eventually(
      () => {
        const all = harness.outbound.records
          .filter((r) => r.topic === TOPIC.deliveryOutcomes)
          .flatMap((r) => parseDeliveryOutcomes(r.value)?.outcomes ?? [])
          .filter((o) => o.destinationId === destination.id);
        return all.filter((o) => o.result === 'delivered').length >= ids.length ? all : undefined;
      },
      20_000,
      'the outcomes of every call',
    );
    for (const id of ids) {
      const mine = outcomes.filter((o) => o.messageId === id);
      expect(mine.find((o) => o.result === 'retrying')?.batchId).toBe(failedBatch);
      const done = mine.filter((o) => o.result === 'delivered');
      expect(done).toHaveLength(1);
      expect(retriedBatches.has(done[0].batchId)).toBe(true);
    }
  });

  it("never holds up another destination's calls while a batch forms", async () => {
    // The batching destination waits half a minute for 500 calls that never come.
    const { source } = await batchingSource(500, 30_000, '/batching');
    await harness.webhookDestination(source.id, {
      urls: [sink.url('/single')],
      name: 'single',
      secret: SECRET,
    });
    const ids = await send(source.writeKey, 100);
    const single = await eventually(
      () => {
        const got = sink.requests.filter((r) => r.path === '/single');
        return got.length >= ids.length ? got : undefined;
      },
      20_000,
      "every call at the single-call destination's webhook",
    );
    const got = single.map(
      (r) => (JSON.parse(r.body.toString()) as { messageId: string }).messageId,
    );
    expect(new Set(got)).toEqual(new Set(ids));
    expect(sink.requests.filter((r) => r.path === '/batching')).toHaveLength(0);
  });
});
