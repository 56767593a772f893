import {
  Context,
  context,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  TextMapGetter,
  TextMapSetter,
  trace,
  TraceFlags,
  Tracer,
  isSpanContextValid,
} from '@opentelemetry/api';

import { followsParent, tracePropagator } from './tracing-sdk';

/** Reads a Kafka record's headers (Buffers) as a propagation carrier. */
const RECORD_HEADERS: TextMapGetter<Readonly<Record<string, Buffer | undefined>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key]?.toString('latin1'),
};

/** Reads HTTP request headers (lower-case names) as a propagation carrier. */
const HTTP_HEADERS: TextMapGetter<Readonly<Record<string, string | string[] | undefined>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** Writes into a header map (a record's headers to produce). */
const HEADER_MAP: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The context a Kafka record's `traceparent` header carries (the root context without one). */
export function recordParent(headers: Readonly<Record<string, Buffer | undefined>>): Context {
  return tracePropagator()?.extract(ROOT_CONTEXT, headers, RECORD_HEADERS) ?? ROOT_CONTEXT;
}

/** The context a producer's `traceparent` HTTP header carries (the root context without one). */
export function httpParent(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Context {
  return tracePropagator()?.extract(ROOT_CONTEXT, headers, HTTP_HEADERS) ?? ROOT_CONTEXT;
}

/**
 * The `traceparent` (and `tracestate`) headers that make what is produced now a child of the
 * active span, sampled or not: a trace left unsampled stays unsampled downstream.
 */
export function activeTraceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  tracePropagator()?.inject(context.active(), headers, HEADER_MAP);
  return headers;
}

/** The `traceparent` (and `tracestate`) headers that make a receiver's work a child of `span`. */
export function spanTraceHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  tracePropagator()?.inject(trace.setSpan(ROOT_CONTEXT, span), headers, HEADER_MAP);
  return headers;
}

/**
 * Runs `work` in a new span (made active for it), and `annotate` on that span once `work` is
 * done, when the span records; a span whose work throws ends with an error status. Below a
 * parent that was not sampled, under a sampler that follows it, no span is made: `work` runs
 * in the parent's context, which travels on unsampled (most calls at a low ratio).
 */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  parent: Context,
  work: () => Promise<T>,
  annotate?: (span: Span, result: T) => void,
): Promise<T> {
  const remote = trace.getSpan(parent);
  if (remote !== undefined && unsampled(remote) && followsParent(tracer)) {
    return context.with(parent, work);
  }
  return inNewSpan(tracer.startSpan(name, { kind }, parent), parent, work, annotate);
}

async function inNewSpan<T>(
  span: Span,
  parent: Context,
  work: () => Promise<T>,
  annotate: ((span: Span, result: T) => void) | undefined,
): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), work);
    if (annotate !== undefined && span.isRecording()) annotate(span, result);
    return result;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** The span active in the current async context, when it records attributes. */
export function recordingSpan(): Span | undefined {
  const span = trace.getSpan(context.active());
  return span?.isRecording() ? span : undefined;
}

/** A valid span context whose sampled flag is off. */
function unsampled(span: Span): boolean {
  const parent = span.spanContext();
  return (parent.traceFlags & TraceFlags.SAMPLED) === 0 && isSpanContextValid(parent);
}

/** An error's class name: never its message, which may quote input. */
function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
