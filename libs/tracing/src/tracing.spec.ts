import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

import { ROOT_CONTEXT, SpanContext, SpanKind, trace } from '@opentelemetry/api';
import { TraceState, W3CTraceContextPropagator } from '@opentelemetry/core';
import { ReadableSpan, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';

import { IncomingRecord } from '@app/kafka';

import {
  httpParent,
  inGivenSpan,
  recordParent,
  spanTraceHeaders,
  startChildSpan,
  startLinkedSpan,
} from './trace-context';
import { startRootSpan, startTracing, stopTracing, tracerOf, TracingOptions } from './tracing-sdk';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

/** A consumed record with `headers`. */
function consumed(headers: Record<string, Buffer>): IncomingRecord {
  return {
    topic: 'calls',
    partition: 0,
    offset: '0',
    key: null,
    value: null,
    headers,
    timestamp: 0,
  };
}

/** A record whose producer's span was sampled, or not. */
function produced(sampled: boolean): IncomingRecord {
  return consumed({
    traceparent: Buffer.from(`00-${TRACE_ID}-${PARENT_ID}-0${sampled ? 1 : 0}`),
  });
}

/**
 * A record that reads its headers by name, as a fetched one does; its header map is built
 * only when asked for (counted in `built`).
 */
function byName(headers: Record<string, Buffer>): IncomingRecord & { built: number } {
  return {
    ...consumed(headers),
    built: 0,
    get headers() {
      this.built += 1;
      return headers;
    },
    text: (name: string) => headers[name]?.toString('utf8'),
  };
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
    const parent = recordParent(produced(true));
    const seen = await inGivenSpan(tracer, 'work', SpanKind.CONSUMER, parent, (span) =>
      Promise.resolve({ context: span.spanContext(), headers: spanTraceHeaders(span) }),
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
      const parent = recordParent(produced(sampled))!;
      const span = tracer.startSpan('work', {}, trace.setSpan(ROOT_CONTEXT, parent));
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
    const seen = await inGivenSpan(
      tracer,
      'work',
      SpanKind.CONSUMER,
      recordParent(produced(false)),
      (span) =>
        Promise.resolve({ spanId: span.spanContext().spanId, headers: spanTraceHeaders(span) }),
    );
    expect(seen.spanId !== PARENT_ID).toBe(own);
    // What it produces carries on the trace, unsampled unless a span of its own was sampled.
    expect(seen.headers.traceparent).toBe(`00-${TRACE_ID}-${seen.spanId}-0${own ? 1 : 0}`);
  });

  it.each<[string, number, string, boolean]>([
    // sampler, ratio, the producer's traceparent flags (none: a new trace), a span recorded
    ['parentbased_traceidratio', 1, '01', true],
    ['parentbased_traceidratio', 1, '00', false],
    ['traceidratio', 1, '00', true],
    ['parentbased_traceidratio', 1, 'none', true],
    ['parentbased_traceidratio', 0, 'none', false],
  ])(
    'inGivenSpan (%s at %d, parent %s) hands its work the span, not made active: recorded %s',
    async (sampler, ratio, flags, recorded) => {
      await startTracing('test', { ...options, sampler, ratio });
      const parent = flags === 'none' ? undefined : recordParent(produced(flags === '01'));
      let annotated = false;
      const seen = await inGivenSpan(
        tracerOf('test')!,
        'work',
        SpanKind.CONSUMER,
        parent,
        (span) =>
          Promise.resolve({
            active: trace.getActiveSpan(),
            context: span.spanContext(),
            headers: spanTraceHeaders(span),
            recording: span.isRecording(),
          }),
        () => {
          annotated = true;
        },
      );
      expect(seen.active).toBeUndefined();
      expect([seen.recording, annotated]).toEqual([recorded, recorded]);
      const { traceId, spanId } = seen.context;
      // Below the unsampled parent it follows, the work has the parent's own span.
      expect(spanId === PARENT_ID).toBe(flags === '00' && sampler.startsWith('parentbased_'));
      if (flags !== 'none') expect(traceId).toBe(TRACE_ID);
      expect(seen.headers.traceparent).toBe(`00-${traceId}-${spanId}-0${recorded ? 1 : 0}`);
    },
  );

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

  it.each<[string, Record<string, string>, boolean]>([
    // case, headers, whether the header map is read (the propagator's general parse)
    ['plain, sampled', { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }, false],
    ['plain, unsampled', { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` }, false],
    [
      'with a tracestate',
      { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: 'a=b' },
      true,
    ],
    ['a later version', { traceparent: `01-${TRACE_ID}-${PARENT_ID}-01-extra` }, true],
    ['upper-case hex', { traceparent: `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01` }, true],
    ['a zero trace id', { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01` }, true],
    ['a zero parent id', { traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` }, true],
    ['no traceparent', {}, false],
  ])('reads a traceparent %s as the W3C propagator does', async (_case, headers, mapRead) => {
    await startTracing('test', options);
    const standard = new W3CTraceContextPropagator();
    const expected = trace.getSpanContext(
      standard.extract(ROOT_CONTEXT, headers, {
        keys: (carrier: Record<string, string>) => Object.keys(carrier),
        get: (carrier: Record<string, string>, key: string): string | undefined => carrier[key],
      }),
    );
    const buffers = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, Buffer.from(value)]),
    );
    expect(httpParent(headers)?.spanContext()).toEqual(expected);
    expect(recordParent(consumed(buffers))?.spanContext()).toEqual(expected);
    const record = byName(buffers);
    expect(recordParent(record)?.spanContext()).toEqual(expected);
    expect(record.built > 0).toBe(mapRead);
  });

  it.each<[string, SpanContext]>([
    ['sampled', { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1 }],
    ['unsampled', { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 0 }],
    [
      'with a tracestate',
      {
        traceId: TRACE_ID,
        spanId: PARENT_ID,
        traceFlags: 1,
        traceState: new TraceState('a=b,c=d'),
      },
    ],
    ['with a zero trace id', { traceId: '0'.repeat(32), spanId: PARENT_ID, traceFlags: 1 }],
    ['with a bad span id', { traceId: TRACE_ID, spanId: 'not-hex', traceFlags: 1 }],
  ])('writes the headers of a span %s as the W3C propagator injects them', async (_case, own) => {
    await startTracing('test', options);
    const span = trace.wrapSpanContext(own);
    const injected: Record<string, string> = {};
    new W3CTraceContextPropagator().inject(trace.setSpan(ROOT_CONTEXT, span), injected, {
      set: (carrier: Record<string, string>, key: string, value: string) => {
        carrier[key] = value;
      },
    });
    expect(spanTraceHeaders(span)).toEqual(injected);
  });

  it.each([0.01, 0.1, 0.5, 0.9, 1])(
    "decides a new trace at a ratio of %d as the tracer's sampler does, on the span's own trace id",
    async (ratio) => {
      await startTracing('test', { ...options, sampler: 'parentbased_traceidratio', ratio });
      const tracer = tracerOf('test')!;
      const sampler = new TraceIdRatioBasedSampler(ratio);
      const spans = Array.from({ length: 2_000 }, () =>
        startRootSpan(tracer, 'work', SpanKind.SERVER),
      );
      const agree = spans.map((span) => {
        const { traceId, spanId } = span.spanContext();
        const sampled = sampler.shouldSample(ROOT_CONTEXT, traceId).decision;
        const recorded = span.isRecording();
        span.end();
        const valid = /^[0-9a-f]{32}$/.test(traceId) && /^[0-9a-f]{16}$/.test(spanId);
        return valid && recorded === (sampled === SamplingDecision.RECORD_AND_SAMPLED);
      });
      expect(agree.every(Boolean)).toBe(true);
      // Below 1, both decisions were taken: the ratio is not all or nothing.
      const flags = new Set(spans.map((span) => span.spanContext().traceFlags));
      expect(flags.size).toBe(ratio === 1 ? 1 : 2);
    },
  );

  it('ends a span once what its annotation waits for settled, not before', async () => {
    await startTracing('test', options);
    let settle: () => void = () => {};
    const later = new Promise<void>((resolve) => (settle = resolve));
    let span: ReadableSpan | undefined;
    await inGivenSpan(
      tracerOf('test')!,
      'work',
      SpanKind.CONSUMER,
      undefined,
      () => Promise.resolve('done'),
      (own) => {
        span = own as unknown as ReadableSpan;
        return later;
      },
    );
    expect(span?.ended).toBe(false);
    settle();
    await later;
    await Promise.resolve();
    expect(span?.ended).toBe(true);
  });

  it('links a fan-in span to each linked span, and each of them back to it', async () => {
    await startTracing('test', options);
    const tracer = tracerOf('test')!;
    const [first, second] = [1, 2].map(() => tracer.startSpan('attempt', {}, ROOT_CONTEXT));
    const batch = startLinkedSpan(tracer, 'batch', SpanKind.CLIENT, first, [first, second]);
    const readable = (span: unknown) => span as ReadableSpan;
    expect(readable(batch).parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(readable(batch).links.map((link) => link.context)).toEqual([
      first.spanContext(),
      second.spanContext(),
    ]);
    for (const attempt of [first, second]) {
      expect(readable(attempt).links.map((link) => link.context)).toEqual([batch.spanContext()]);
    }
  });

  it("starts a child span below a given span, in the given span's trace", async () => {
    await startTracing('test', options);
    const tracer = tracerOf('test')!;
    const parent = tracer.startSpan('attempt', {}, ROOT_CONTEXT);
    const child = startChildSpan(
      tracer,
      'POST',
      SpanKind.CLIENT,
      parent,
    ) as unknown as ReadableSpan;
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(child.kind).toBe(SpanKind.CLIENT);
  });

  it('rethrows what the work throws', async () => {
    await startTracing('test', options);
    let span: ReadableSpan | undefined;
    const failing = inGivenSpan(tracerOf('test')!, 'work', SpanKind.INTERNAL, undefined, (own) => {
      span = own as unknown as ReadableSpan;
      return Promise.reject(new TypeError('bad input'));
    });
    await expect(failing).rejects.toThrow(TypeError);
    // Ended with an error status naming the class, never the message.
    expect([span?.ended, span?.status]).toEqual([true, { code: 2, message: 'TypeError' }]);
  });
});
