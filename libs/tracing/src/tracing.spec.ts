import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

import { ROOT_CONTEXT, SpanContext, SpanKind, trace } from '@opentelemetry/api';

import { activeTraceHeaders, inSpan, recordParent } from './trace-context';
import { startTracing, stopTracing, tracerOf, TracingOptions } from './tracing-sdk';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

/** The trace headers of a record whose producer's span was sampled, or not. */
function produced(sampled: boolean): Record<string, Buffer> {
  return { traceparent: Buffer.from(`00-${TRACE_ID}-${PARENT_ID}-0${sampled ? 1 : 0}`) };
}

/** The context of the span active where it is called. */
function activeContext(): SpanContext {
  return trace.getActiveSpan()!.spanContext();
}

describe('tracing', () => {
  let receiver: Server;
  let exports = 0;
  let options: TracingOptions;

  beforeAll(async () => {
    // The exporter's endpoint: takes every export and answers as a Collector does.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        exports += 1;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    options = {
      url: `http://127.0.0.1:${port}/v1/traces`,
      protocol: 'http/protobuf',
      serviceName: 'sluice-test',
      resourceAttributes: '',
      sampler: 'parentbased_always_on',
      ratio: 1,
      scheduleDelayMs: 60_000,
      maxQueueSize: 16,
    };
  });

  afterEach(async () => {
    await stopTracing('test');
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('has no tracer while traces are off', async () => {
    await startTracing('test', undefined);
    expect(tracerOf('test')).toBeUndefined();
  });

  it('continues a record producer span, and hands its own on to what it produces', async () => {
    await startTracing('test', options);
    const tracer = tracerOf('test')!;
    const seen = await inSpan(tracer, 'work', SpanKind.CONSUMER, recordParent(produced(true)), () =>
      Promise.resolve({ context: activeContext(), headers: activeTraceHeaders() }),
    );
    expect(seen.context.traceId).toBe(TRACE_ID);
    expect(seen.headers.traceparent).toBe(`00-${TRACE_ID}-${seen.context.spanId}-01`);
    await stopTracing('test');
    // The span was exported at shutdown.
    expect(exports).toBeGreaterThan(0);
  });

  it.each<[string, number, boolean, boolean]>([
    // sampler, ratio, the producer's span sampled, this span recorded
    ['parentbased_traceidratio', 0, true, true],
    ['parentbased_traceidratio', 1, false, false],
    ['parentbased_always_on', 1, false, false],
    ['traceidratio', 1, false, true],
    ['always_off', 1, true, false],
  ])(
    '%s at %d below a parent sampled %s: recorded %s',
    async (sampler, ratio, sampled, recorded) => {
      await startTracing('test', { ...options, sampler, ratio });
      const tracer = tracerOf('test')!;
      const parent = recordParent(produced(sampled));
      const span = tracer.startSpan('work', {}, parent);
      expect(span.isRecording()).toBe(recorded);
      span.end();
    },
  );

  it.each<[string, boolean]>([
    // sampler, a span of its own made below the unsampled parent
    ['parentbased_traceidratio', false],
    ['parentbased_always_on', false],
    ['traceidratio', true],
  ])('%s below an unsampled parent: a span of its own %s', async (sampler, own) => {
    await startTracing('test', { ...options, sampler, ratio: 1 });
    const tracer = tracerOf('test')!;
    const seen = await inSpan(
      tracer,
      'work',
      SpanKind.CONSUMER,
      recordParent(produced(false)),
      () => Promise.resolve({ spanId: activeContext().spanId, headers: activeTraceHeaders() }),
    );
    expect(seen.spanId !== PARENT_ID).toBe(own);
    // What it produces carries on the trace, unsampled unless a span of its own was sampled.
    expect(seen.headers.traceparent).toBe(`00-${TRACE_ID}-${seen.spanId}-0${own ? 1 : 0}`);
  });

  it.each<[string, number, boolean]>([
    ['parentbased_traceidratio', 0, false],
    ['parentbased_traceidratio', 1, true],
    ['always_off', 1, false],
  ])('%s at %d records a new trace: %s', async (sampler, ratio, recorded) => {
    await startTracing('test', { ...options, sampler, ratio });
    const span = tracerOf('test')!.startSpan('work', {}, ROOT_CONTEXT);
    expect(span.isRecording()).toBe(recorded);
    span.end();
  });

  it('rethrows what the work throws', async () => {
    await startTracing('test', options);
    const failing = inSpan(tracerOf('test')!, 'work', SpanKind.INTERNAL, ROOT_CONTEXT, () =>
      Promise.reject(new TypeError('bad input')),
    );
    await expect(failing).rejects.toThrow(TypeError);
  });
});
