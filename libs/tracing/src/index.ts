export { SpanKind, SpanStatusCode } from '@opentelemetry/api';
export type { Span, Tracer } from '@opentelemetry/api';
export { ATTRIBUTE } from './attributes';
export {
  httpParent,
  inGivenSpan,
  recordParent,
  spanTraceHeaders,
  startChildSpan,
  startLinkedSpan,
} from './trace-context';
export { TracingLifecycle } from './tracing.lifecycle';
export { startTracing, stopTracing, tracerOf, TracingOptions } from './tracing-sdk';
