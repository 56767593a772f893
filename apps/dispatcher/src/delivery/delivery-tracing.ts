import { HEADER } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';
import {
  activeTraceHeaders,
  ATTRIBUTE,
  inSpan,
  recordingSpan,
  recordParent,
  Span,
  SpanKind,
  spanTraceHeaders,
  SpanStatusCode,
  Tracer,
} from '@app/tracing';

import type { AttemptResult } from './webhook-client';

/** The delay label in a retry tier's topic name (`sluice.deliveries.retry.10s.v1`). */
const TIER = /\.retry\.([^.]+)\.v1$/;

/**
 * One delivery record's handling, an attempt, in a consumer span: the child of the routing
 * span on the main topic, of the previous attempt's span on a retry tier (the retry record
 * carries its `traceparent`), so every attempt of a delivery joins the call's trace.
 */
export function tracedAttempt<T extends { readonly result: unknown }>(
  tracer: Tracer,
  record: IncomingRecord,
  handle: () => Promise<T>,
): Promise<T> {
  const tier = TIER.exec(record.topic)?.[1] ?? 'main';
  const parent = recordParent(record.headers);
  return inSpan(tracer, `deliver ${tier}`, SpanKind.CONSUMER, parent, handle, (span, handled) => {
    span.setAttribute(ATTRIBUTE.messagingSystem, 'kafka');
    span.setAttribute(ATTRIBUTE.messagingOperation, 'process');
    span.setAttribute(ATTRIBUTE.messagingDestination, record.topic);
    span.setAttribute(ATTRIBUTE.retryTier, tier);
    span.setAttribute(ATTRIBUTE.attempt, Number(header(record, HEADER.attempt) ?? '1'));
    // A batched call's outcome comes once its batch was answered, after this span.
    const outcome = typeof handled.result === 'string' ? handled.result : 'batched';
    span.setAttribute(ATTRIBUTE.deliveryOutcome, outcome);
    for (const [name, key] of FACT_HEADERS) {
      const value = header(record, key);
      if (value !== undefined) span.setAttribute(name, value);
    }
  });
}

/** Attributes read from the delivery's headers as they are. */
const FACT_HEADERS = [
  [ATTRIBUTE.destinationId, HEADER.destinationId],
  [ATTRIBUTE.sourceId, HEADER.sourceId],
  [ATTRIBUTE.messageId, HEADER.messageId],
  [ATTRIBUTE.callType, HEADER.callType],
] as const;

/**
 * A client span for one webhook's POST, the child of the attempt's span (the active one); none
 * below an attempt that is not sampled, whose children would not be either. It names the
 * webhook's host and port only: a URL's path or query may hold a token.
 */
export function startWebhookSpan(tracer: Tracer, url: string, webhookId: string): Span | undefined {
  if (recordingSpan() === undefined) return undefined;
  const span = tracer.startSpan('POST', { kind: SpanKind.CLIENT });
  if (span.isRecording()) {
    const target = new URL(url);
    const port = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : target.port;
    span.setAttribute(ATTRIBUTE.httpMethod, 'POST');
    span.setAttribute(ATTRIBUTE.serverAddress, target.hostname);
    span.setAttribute(ATTRIBUTE.serverPort, Number(port));
    span.setAttribute(ATTRIBUTE.urlScheme, target.protocol.slice(0, -1));
    span.setAttribute(ATTRIBUTE.webhookId, webhookId);
  }
  return span;
}

/**
 * Adds the `traceparent` of the webhook's span (of the unsampled attempt's, when it has none)
 * to a POST's headers (a destination's `sendTraceparent`), replacing a static header of that
 * name in any case.
 */
export function addTraceparent(headers: Record<string, string>, span: Span | undefined): void {
  const trace = span ? spanTraceHeaders(span) : activeTraceHeaders();
  for (const name of Object.keys(headers)) {
    if (Object.hasOwn(trace, name.toLowerCase())) delete headers[name];
  }
  Object.assign(headers, trace);
}

/** Ends a webhook's span with its answer: status, result and latency; an error unless 2xx. */
export function endWebhookSpan(span: Span, result: AttemptResult, latencyMs: number): void {
  if (span.isRecording()) {
    if (result.status !== undefined) span.setAttribute(ATTRIBUTE.httpStatus, result.status);
    span.setAttribute(ATTRIBUTE.webhookResult, result.kind);
    span.setAttribute(ATTRIBUTE.latencyMs, Math.round(latencyMs * 10) / 10);
    if (result.kind !== 'success') {
      span.setAttribute(ATTRIBUTE.errorType, result.reason);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

function header(record: IncomingRecord, name: string): string | undefined {
  return record.headers[name]?.toString('utf8');
}
