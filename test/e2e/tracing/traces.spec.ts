import { randomBytes, randomUUID } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, headerText } from '@app/kafka';

import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { IngestHarness } from '../../helpers/ingest-harness';
import { OtlpReceiver, ReceivedSpan } from '../../helpers/otlp-receiver';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

const SECRET = 'trace-shared-secret-value';
const STATIC_HEADER_VALUE = 'trace-static-header-value';
const URL_TOKEN = 'trace-url-token-value';
/** OTLP's span kinds. */
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/**
 * Ingest, the router and the dispatcher with traces on, exporting OTLP/HTTP (protobuf, the
 * default) to a real receiver: one call whose first POST fails gives one trace from the
 * producer's span to both attempts.
 */
describe('traces', () => {
  const harness = new DispatcherHarness();
  const collector = new OtlpReceiver();
  const sink = new WebhookReceiver();

  beforeAll(async () => {
    await collector.start();
    await sink.start();
    await harness.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
  });

  afterAll(async () => {
    await harness.close();
    await sink.stop();
    await collector.stop();
  });

  it('links the request, routing and both attempts of a retried call in one trace', async () => {
    const source = await harness.source();
    await harness.webhookDestination(source.id, {
      urls: [sink.url(`/hook?token=${URL_TOKEN}`)],
      secret: SECRET,
      headers: { 'X-Api-Key': STATIC_HEADER_VALUE },
    });
    sink.answer = (_request, index) => ({ status: index === 0 ? 500 : 200 });
    const traceId = randomBytes(16).toString('hex');
    const producerSpanId = randomBytes(8).toString('hex');
    const messageId = randomUUID();
    const answer = await harness.post(
      '/v1/track',
      { userId: 'tracer', event: 'Order Completed', messageId },
      {
        basic: source.writeKey,
        headers: { traceparent: `00-${traceId}-${producerSpanId}-01` },
      },
    );
    expect(answer.status).toBe(200);
    await sink.received(2, 20_000);

    // request, routing and two attempts, each telling its only webhook's POST
    const spans = await collector.trace(traceId, 4);
    const [request] = only(spans, (s) => s.kind === SERVER);
    expect(request).toMatchObject({
      service: 'sluice-ingest',
      name: 'POST /v1/track',
      parentSpanId: producerSpanId,
    });
    expect(request.attributes).toMatchObject({
      'http.response.status_code': 200,
      'sluice.source.id': source.id,
      'sluice.calls.accepted': 1,
    });
    const [route] = only(spans, (s) => s.service === 'sluice-router');
    expect(route).toMatchObject({ kind: CONSUMER, parentSpanId: request.spanId });
    expect(route.attributes).toMatchObject({
      'sluice.route.outcome': 'delivered',
      'sluice.message.id': messageId,
    });
    const [first] = only(spans, (s) => s.name === 'deliver main');
    expect(first).toMatchObject({ service: 'sluice-dispatcher', parentSpanId: route.spanId });
    expect(first.attributes).toMatchObject({
      'sluice.delivery.attempt': 1,
      'sluice.delivery.tier': 'main',
      'sluice.delivery.outcome': 'retried',
    });
    // The retry joins the trace as the child of the attempt that scheduled it.
    const [second] = only(spans, (s) => s.name === 'deliver 1s');
    expect(second).toMatchObject({ kind: CONSUMER, parentSpanId: first.spanId });
    expect(second.attributes).toMatchObject({
      'sluice.delivery.attempt': 2,
      'sluice.delivery.outcome': 'delivered',
    });
    expect(spans.filter((s) => s.kind === CLIENT)).toEqual([]);
    expect(
      [first, second].map((s) => [s.attributes['http.response.status_code'], s.statusCode]),
    ).toEqual([
      [500, 2],
      [200, 0],
    ]);
    expect(first.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': sink.port,
      'sluice.webhook.result': 'retryable',
    });
    expect(spans).toHaveLength(4);
    expect(spans.every((s) => s.traceId === traceId)).toBe(true);

    // The POST carries no trace context unless its destination asks, and no span a secret.
    expect(sink.requests[0].headers[HEADER.traceparent]).toBeUndefined();
    const values = spans.flatMap((s) => Object.values(s.attributes).map(String));
    for (const secret of [source.writeKey, SECRET, STATIC_HEADER_VALUE, URL_TOKEN]) {
      expect(values.filter((v) => v.includes(secret))).toEqual([]);
    }
  });

  it("sends the attempt span's traceparent to a destination that asks for it", async () => {
    const source = await harness.source();
    const receiver = await new WebhookReceiver().start();
    try {
      const destination = await harness.webhookDestination(source.id, { urls: [receiver.url()] });
      await harness.sql('UPDATE destination SET send_traceparent = true WHERE id = $1', [
        destination.id,
      ]);
      await harness.dispatcherSees(destination.id, (d) => d?.sendTraceparent === true);
      const traceId = randomBytes(16).toString('hex');
      const answer = await harness.post(
        '/v1/track',
        { userId: 'tracer', event: 'Order Completed', messageId: randomUUID() },
        {
          basic: source.writeKey,
          headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
        },
      );
      expect(answer.status).toBe(200);
      const [request] = await receiver.received(1, 20_000);
      const spans = await collector.trace(traceId, 3);
      const [attempt] = only(spans, (s) => s.name === 'deliver main');
      expect(request.headers[HEADER.traceparent]).toBe(`00-${traceId}-${attempt.spanId}-01`);
    } finally {
      await receiver.stop();
    }
  });

  it("shows a batched call's batch request in its trace, and the call's outcome", async () => {
    const source = await harness.source();
    const receiver = await new WebhookReceiver().start();
    try {
      const destination = await harness.webhookDestination(source.id, {
        urls: [receiver.url()],
        enabled: false,
      });
      await harness.sql(
        `UPDATE destination SET batch_max_calls = 2, batch_max_bytes = 1048576,
         batch_max_wait_ms = 30000, enabled = true WHERE id = $1`,
        [destination.id],
      );
      await harness.routerSeesDestination(destination.id, (d) => d?.enabled === true);
      await harness.dispatcherSees(destination.id, (d) => d?.batching?.maxCalls === 2);
      const traceIds = [1, 2].map(() => randomBytes(16).toString('hex'));
      for (const traceId of traceIds) {
        const answer = await harness.post(
          '/v1/track',
          { userId: 'tracer', event: 'Order Completed', messageId: randomUUID() },
          {
            basic: source.writeKey,
            headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
          },
        );
        expect(answer.status).toBe(200);
      }
      const [request] = await receiver.received(1, 20_000);
      const batchId = request.headers['x-sluice-batch-id'];
      // Each call's attempt says what became of it, and which batch it went in.
      const attempts: ReceivedSpan[] = [];
      for (const traceId of traceIds) {
        const [attempt] = only(await collector.trace(traceId, 3), (s) => s.name === 'deliver main');
        expect(attempt.attributes).toMatchObject({
          'sluice.delivery.outcome': 'delivered',
          'sluice.batch.id': batchId,
        });
        attempts.push(attempt);
      }
      // One span for the batch's request, linked to both attempts and linked back from each.
      const batch = await eventually(() => {
        const found = collector.spans.filter((s) => s.name === 'deliver batch');
        return found.find((s) => s.attributes['sluice.batch.id'] === batchId);
      }, 20_000);
      expect(batch).toMatchObject({ service: 'sluice-dispatcher', kind: CLIENT, statusCode: 0 });
      expect(batch.attributes).toMatchObject({
        'sluice.batch.calls': 2,
        'sluice.destination.id': destination.id,
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
        'server.port': receiver.port,
      });
      const ids = (list: readonly { traceId: string; spanId: string }[]) =>
        list.map(({ traceId, spanId }) => `${traceId}/${spanId}`).sort();
      expect(ids(batch.links)).toEqual(ids(attempts));
      for (const attempt of attempts) expect(ids(attempt.links)).toEqual(ids([batch]));
      // The batch is a child of one of the attempts, in that call's trace.
      expect(attempts.map((a) => `${a.traceId}/${a.spanId}`)).toContain(
        `${batch.traceId}/${batch.parentSpanId}`,
      );
    } finally {
      await receiver.stop();
    }
  });
});

/** Ingest alone, exporting OTLP/HTTP JSON: a record of the Kafka ingress continues its trace. */
describe('traces of the Kafka ingress', () => {
  const harness = new IngestHarness();
  const collector = new OtlpReceiver();
  let producer: BatchProducer;

  beforeAll(async () => {
    await collector.start();
    await harness.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    producer = new BatchProducer(harness.connection);
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await harness.close();
    await collector.stop();
  });

  it("makes the record's traceparent the parent of its span and of the call's", async () => {
    const source = await harness.source();
    const traceId = randomBytes(16).toString('hex');
    const producerSpanId = randomBytes(8).toString('hex');
    const messageId = randomUUID();
    await producer.send([
      {
        topic: TOPIC.ingest,
        key: 'k',
        value: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId }),
        headers: {
          [HEADER.writeKey]: source.writeKey,
          [HEADER.traceparent]: `00-${traceId}-${producerSpanId}-01`,
        },
      },
    ]);
    const [call] = await harness.reader.waitFor(
      TOPIC.calls,
      (r) => headerText(r, HEADER.messageId) === messageId,
    );
    const [span] = await collector.trace(traceId, 1);
    expect(span).toMatchObject({
      service: 'sluice-ingest',
      kind: CONSUMER,
      parentSpanId: producerSpanId,
    });
    expect(span.attributes).toMatchObject({
      'messaging.destination.name': TOPIC.ingest,
      'sluice.source.id': source.id,
      'sluice.calls.accepted': 1,
    });
    expect(headerText(call, HEADER.traceparent)).toBe(`00-${traceId}-${span.spanId}-01`);
    const values = Object.values(span.attributes).map(String);
    expect(values.filter((v) => v.includes(source.writeKey))).toEqual([]);
  });
});

/** The spans that `match`, failing unless there is exactly one. */
function only(
  spans: readonly ReceivedSpan[],
  match: (span: ReceivedSpan) => boolean,
): ReceivedSpan[] {
  const found = spans.filter(match);
  expect(found.map((s) => s.name)).toHaveLength(1);
  return found;
}
