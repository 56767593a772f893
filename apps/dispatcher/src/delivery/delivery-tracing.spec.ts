import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

import { trace } from '@opentelemetry/api';

import { IncomingRecord } from '@app/kafka';
import { startTracing, stopTracing, tracerOf, TracingOptions } from '@app/tracing';

import { addTraceparent, startWebhookSpan, tracedAttempt, tracedBatch } from './delivery-tracing';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

/**
 * The tests look at contexts only; spans go to a receiver that answers and keeps nothing (a
 * refused export would be retried on timers that outlive the tests).
 */
const OPTIONS: Omit<TracingOptions, 'url'> = {
  protocol: 'http/protobuf',
  serviceName: 'sluice-test',
  resourceAttributes: '',
  sampler: 'parentbased_always_on',
  ratio: 1,
  scheduleDelayMs: 60_000,
  maxQueueSize: 16,
};

function delivery(sampled: boolean): IncomingRecord {
  const traceparent = `00-${TRACE_ID}-b7ad6b7169203331-0${sampled ? 1 : 0}`;
  return {
    topic: 'sluice.deliveries.v1',
    partition: 0,
    offset: '7',
    key: null,
    value: Buffer.from('{}'),
    headers: { traceparent: Buffer.from(traceparent) },
    timestamp: 0,
  };
}

describe('delivery tracing below an unsampled routing span', () => {
  let receiver: Server;

  beforeAll(async () => {
    receiver = createServer((req, res) => req.resume().on('end', () => res.end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    await startTracing('dispatcher-spec', {
      ...OPTIONS,
      url: `http://127.0.0.1:${port}/v1/traces`,
    });
  });
  afterAll(async () => {
    await stopTracing('dispatcher-spec');
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('makes no webhook span, and sends the attempt context, unsampled, replacing a static one', async () => {
    const tracer = tracerOf('dispatcher-spec')!;
    const headers: Record<string, string> = { TraceParent: 'static', 'x-api-key': 'k' };
    const seen = await tracedAttempt(tracer, delivery(false), (attempt) => {
      const url = 'https://hooks.example.com/a?token=t';
      const span = startWebhookSpan(tracer, attempt, url, 'w-1', false);
      addTraceparent(headers, span, attempt);
      return Promise.resolve({ result: 'delivered', span });
    });
    expect(seen.span).toBeUndefined();
    expect(headers).toEqual({
      'x-api-key': 'k',
      traceparent: expect.stringMatching(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`)),
    });
  });

  it.each<[string, boolean]>([
    // an attempt's webhooks, the webhook's span its own
    ['several', true],
    ['one', false],
  ])('below a sampled attempt to %s webhook(s): own span %s', async (_webhooks, own) => {
    const tracer = tracerOf('dispatcher-spec')!;
    const headers: Record<string, string> = {};
    const seen = await tracedAttempt(tracer, delivery(true), (span) => {
      const webhook = startWebhookSpan(tracer, span, 'https://hooks.example.com/a', 'w-1', !own);
      addTraceparent(headers, webhook, span);
      if (webhook?.own) webhook.span.end();
      const attempt = span.spanContext().spanId;
      // Handed to the work, not made active: nothing reads it from the async context.
      const active = trace.getActiveSpan();
      return Promise.resolve({ result: 'delivered', webhook, attempt, active });
    });
    expect(seen.active).toBeUndefined();
    const spanId = seen.webhook!.span.spanContext().spanId;
    expect(seen.webhook!.own).toBe(own);
    expect(spanId === seen.attempt).toBe(!own);
    expect(headers.traceparent).toBe(`00-${TRACE_ID}-${spanId}-01`);
  });

  it('sends a batch with no sampled call outside the trace of the call that sent it', async () => {
    const tracer = tracerOf('dispatcher-spec')!;
    const facts = { batchId: 'b-1', destinationId: 'd-1', calls: 2, alone: true };
    const seen = await tracedAttempt(tracer, delivery(true), async (span) => {
      const inBatch = await tracedBatch(tracer, [], facts, (batch) => Promise.resolve(batch));
      return { result: 'delivered', inBatch, recording: span.isRecording() };
    });
    expect(seen.recording).toBe(true);
    expect(seen.inBatch).toBeUndefined();
  });

  it("hands a batch with sampled calls its span, the first call's child, linked both ways", async () => {
    const tracer = tracerOf('dispatcher-spec')!;
    const facts = { batchId: 'b-2', destinationId: 'd-1', calls: 2, alone: true };
    const first = tracer.startSpan('deliver main');
    const second = tracer.startSpan('deliver main');
    const batch = await tracedBatch(tracer, [first, second], facts, (span) =>
      Promise.resolve(span!),
    );
    const context = batch.spanContext();
    expect(context.traceId).toBe(first.spanContext().traceId);
    expect(
      (batch as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext,
    ).toMatchObject({ spanId: first.spanContext().spanId });
    expect(batch.isRecording()).toBe(false);
    for (const attempt of [first, second]) {
      const links = (attempt as unknown as { links: { context: { spanId: string } }[] }).links;
      expect(links.map((link) => link.context.spanId)).toEqual([context.spanId]);
      attempt.end();
    }
  });
});
