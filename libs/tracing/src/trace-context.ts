import {
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  TextMapGetter,
  trace,
  TraceFlags,
  Tracer,
  isSpanContextValid,
} from '@opentelemetry/api';

import { headerText, IncomingRecord } from '@app/kafka';

import { followsParent, startRootSpan, tracePropagator } from './tracing-sdk';

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

/**
 * The remote parent a Kafka record's `traceparent` header carries, as a span that does not
 * record (none without a valid one). A span, not a context: below an unsampled parent no span
 * of its own is made, and a context for it would be made for nothing.
 */
export function recordParent(record: IncomingRecord): Span | undefined {
  const propagator = tracePropagator();
  if (propagator === undefined) return undefined;
  // Read by name: a fetched record builds its header map only for the propagator's general
  // parse, which Sluice's own plain traceparent never needs.
  const traceparent = headerText(record, 'traceparent');
  if (traceparent === undefined) return undefined;
  const plain =
    traceparent.length === TRACEPARENT_LENGTH && headerText(record, 'tracestate') === undefined;
  return (
    (plain && plainParent(traceparent)) ||
    trace.getSpan(propagator.extract(ROOT_CONTEXT, record.headers, RECORD_HEADERS))
  );
}

/** The remote parent a producer's `traceparent` HTTP header carries (see {@link recordParent}). */
export function httpParent(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Span | undefined {
  const propagator = tracePropagator();
  if (propagator === undefined) return undefined;
  const traceparent = headers.traceparent;
  if (traceparent === undefined) return undefined;
  const plain = headers.tracestate === undefined && typeof traceparent === 'string';
  return (
    (plain && plainParent(traceparent)) ||
    trace.getSpan(propagator.extract(ROOT_CONTEXT, headers, HTTP_HEADERS))
  );
}

/** `00-<trace id>-<parent id>-<flags>`: a version 00 traceparent, lower-case hex. */
const TRACEPARENT = /^00-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;
const TRACEPARENT_LENGTH = 55;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * The remote parent of a plain version 00 `traceparent` (what Sluice's apps send), read
 * without the propagator's general parse; undefined for anything else, which the propagator
 * reads (or rejects) as the W3C rules say.
 */
function plainParent(value: string): Span | undefined {
  if (!TRACEPARENT.test(value)) return undefined;
  const parent = {
    traceId: value.slice(3, 35),
    spanId: value.slice(36, 52),
    traceFlags: parseInt(value.slice(53), 16),
    isRemote: true,
  };
  const valid = parent.traceId !== ZERO_TRACE_ID && parent.spanId !== ZERO_SPAN_ID;
  return valid ? trace.wrapSpanContext(parent) : undefined;
}

/**
 * The `traceparent` (and `tracestate`) headers that make a receiver's work a child of `span`:
 * what the W3C propagator's `inject` writes (tracing.spec.ts checks both agree), written
 * without the context `inject` reads the span from, which every call or retry would make.
 */
export function spanTraceHeaders(span: Span): Record<string, string> {
  if (tracePropagator() === undefined) return {};
  const context = span.spanContext();
  if (!isSpanContextValid(context)) return {};
  const flags = Number(context.traceFlags || TraceFlags.NONE).toString(16);
  const headers: Record<string, string> = {
    traceparent: `00-${context.traceId}-${context.spanId}-0${flags}`,
  };
  if (context.traceState !== undefined) headers.tracestate = context.traceState.serialize();
  return headers;
}

/**
 * Runs `work` in a new span below `parent` (a remote parent; none: a new trace), handed to it:
 * the work passes it on itself (into the records it produces, its requests' headers). The span
 * is never made the active one, so the work runs without an async context of its own, which
 * would cost every unit of work.
 * `annotate` runs on the span once `work` is done, when the span records; a span whose work
 * throws ends with an error status. When `annotate` returns a promise, the span ends once it
 * settled (what `work` started and left running, such as a batched call's outcome), and
 * `work`'s result does not wait for it. Below a parent that was not sampled, under a sampler
 * that follows it, no span is made: `work` is handed the parent's span, which carries the
 * decision on unsampled (most calls at a low ratio).
 */
export function inGivenSpan<T>(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  parent: Span | undefined,
  work: (span: Span) => Promise<T>,
  annotate?: (span: Span, result: T) => void | Promise<void>,
): Promise<T> {
  const span = newSpan(tracer, name, kind, parent);
  if (!span.isRecording()) return work(span);
  return inNewSpan(span, () => work(span), annotate);
}

/** The span of new work below `parent`: none is made below an unsampled parent it follows. */
function newSpan(tracer: Tracer, name: string, kind: SpanKind, parent: Span | undefined): Span {
  if (parent === undefined) return startRootSpan(tracer, name, kind);
  if (unsampled(parent) && followsParent(tracer)) return parent;
  return tracer.startSpan(name, { kind }, trace.setSpan(ROOT_CONTEXT, parent));
}

async function inNewSpan<T>(
  span: Span,
  work: () => Promise<T>,
  annotate: ((span: Span, result: T) => void | Promise<void>) | undefined,
): Promise<T> {
  let later: void | Promise<void> = undefined;
  try {
    const result = await work();
    if (annotate !== undefined && span.isRecording()) later = annotate(span, result);
    return result;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
    throw error;
  } finally {
    if (later === undefined) span.end();
    else
      void later.then(
        () => span.end(),
        (error: unknown) => failed(span, error),
      );
  }
}

/** Ends `span` with an error status naming what was thrown. */
function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(error) });
  span.end();
}

/** A new span, the child of `parent`. */
export function startChildSpan(tracer: Tracer, name: string, kind: SpanKind, parent: Span): Span {
  return tracer.startSpan(name, { kind }, trace.setSpan(ROOT_CONTEXT, parent));
}

/**
 * A span below `parent` linked to each of `links` (fan-in: one piece of work for several
 * traces' spans), and linked back from each, so each of those traces leads to it.
 */
export function startLinkedSpan(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  parent: Span,
  links: readonly Span[],
): Span {
  const options = { kind, links: links.map((span) => ({ context: span.spanContext() })) };
  const span = tracer.startSpan(name, options, trace.setSpan(ROOT_CONTEXT, parent));
  const back = { context: span.spanContext() };
  for (const linked of links) linked.addLink(back);
  return span;
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
