import { HEADER } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';
import {
  ATTRIBUTE,
  inGivenSpan,
  recordParent,
  Span,
  SpanKind,
  spanTraceHeaders,
  SpanStatusCode,
  startChildSpan,
  startLinkedSpan,
  Tracer,
} from '@app/tracing';

import type { AttemptResult } from './attempt-result';

/** The delay label in a retry tier's topic name (`sluice.deliveries.retry.10s.v1`). */
const TIER = /\.retry\.([^.]+)\.v1$/;

/** A webhook URL's host, port and scheme, for its span's attributes. */
interface Target {
  readonly host: string;
  readonly port: number;
  readonly scheme: string;
}

/** Webhook URLs' targets, read once (emptied past `MAX_TARGETS`: URLs come and go). */
const targets = new Map<string, Target>();
const MAX_TARGETS = 10_000;

/** Each topic's retry tier and attempt span name, read once. */
const tiers = new Map<string, { readonly tier: string; readonly name: string }>();

/**
 * One delivery record's handling, an attempt, in a consumer span: the child of the routing
 * span on the main topic, of the previous attempt's span on a retry tier (the retry record
 * carries its `traceparent`), so every attempt of a delivery joins the call's trace. A batched
 * call's span lasts until its batch was answered, and then says what became of the call. The
 * span is handed to `handle`, which passes it on (to its POSTs, its retry record), not made
 * the active one; below an unsampled parent it is that parent's span.
 */
export function tracedAttempt<T extends { readonly result: string | (() => Promise<string>) }>(
  tracer: Tracer,
  record: IncomingRecord,
  handle: (span: Span) => Promise<T>,
): Promise<T> {
  const { tier, name } = tierOf(record.topic);
  const parent = recordParent(record);
  return inGivenSpan(tracer, name, SpanKind.CONSUMER, parent, handle, (span, handled) => {
    span.setAttribute(ATTRIBUTE.messagingSystem, 'kafka');
    span.setAttribute(ATTRIBUTE.messagingOperation, 'process');
    span.setAttribute(ATTRIBUTE.messagingDestination, record.topic);
    span.setAttribute(ATTRIBUTE.retryTier, tier);
    span.setAttribute(ATTRIBUTE.attempt, Number(headerText(record, HEADER.attempt) ?? '1'));
    for (const [name, key] of FACT_HEADERS) {
      const value = headerText(record, key);
      if (value !== undefined) span.setAttribute(name, value);
    }
    const result = handled.result;
    if (typeof result === 'string') {
      span.setAttribute(ATTRIBUTE.deliveryOutcome, result);
      return undefined;
    }
    return result().then((outcome) => {
      span.setAttribute(ATTRIBUTE.deliveryOutcome, outcome);
    });
  });
}

function tierOf(topic: string): { readonly tier: string; readonly name: string } {
  let known = tiers.get(topic);
  if (known === undefined) {
    const tier = TIER.exec(topic)?.[1] ?? 'main';
    known = { tier, name: `deliver ${tier}` };
    tiers.set(topic, known);
  }
  return known;
}

/** Attributes read from the delivery's headers as they are. */
const FACT_HEADERS = [
  [ATTRIBUTE.destinationId, HEADER.destinationId],
  [ATTRIBUTE.sourceId, HEADER.sourceId],
  [ATTRIBUTE.messageId, HEADER.messageId],
  [ATTRIBUTE.callType, HEADER.callType],
] as const;

/** The span a webhook's POST is told on; `own` when it is the POST's own client span. */
export interface WebhookSpan {
  readonly span: Span;
  readonly own: boolean;
}

/**
 * The span of one webhook's POST below `parent` (the attempt's span, or a batch's): none when
 * it does not record (an attempt that is not sampled), whose children would not either. An
 * attempt's only POST (`alone`) is told on the parent itself, one span fewer; each POST of
 * several has a client span of its own, the parent's child. It names the webhook's host and
 * port only: a URL's path or query may hold a token.
 */
export function startWebhookSpan(
  tracer: Tracer,
  parent: Span | undefined,
  url: string,
  webhookId: string,
  alone: boolean,
): WebhookSpan | undefined {
  if (parent === undefined || !parent.isRecording()) return undefined;
  const span = alone ? parent : startChildSpan(tracer, 'POST', SpanKind.CLIENT, parent);
  if (span.isRecording()) {
    const target = targetOf(url);
    span.setAttribute(ATTRIBUTE.httpMethod, 'POST');
    span.setAttribute(ATTRIBUTE.serverAddress, target.host);
    span.setAttribute(ATTRIBUTE.serverPort, target.port);
    span.setAttribute(ATTRIBUTE.urlScheme, target.scheme);
    span.setAttribute(ATTRIBUTE.webhookId, webhookId);
  }
  return { span, own: !alone };
}

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : parsed.port;
    target = { host: parsed.hostname, port: Number(port), scheme: parsed.protocol.slice(0, -1) };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/**
 * Adds the `traceparent` of the webhook's span (of `parent`, the unsampled attempt's or batch's,
 * when it has none; nothing without either) to a POST's headers (a destination's
 * `sendTraceparent`), replacing a static header of that name in any case.
 */
export function addTraceparent(
  headers: Record<string, string>,
  webhook: WebhookSpan | undefined,
  parent: Span | undefined,
): void {
  const span = webhook?.span ?? parent;
  const trace = span === undefined ? {} : spanTraceHeaders(span);
  for (const name of Object.keys(headers)) {
    if (Object.hasOwn(trace, name.toLowerCase())) delete headers[name];
  }
  Object.assign(headers, trace);
}

/**
 * Tells a webhook's answer on its span: status, result and latency; an error unless 2xx. The
 * POST's own span ends here; an attempt's span ends with its attempt.
 */
export function endWebhookSpan(
  { span, own }: WebhookSpan,
  result: AttemptResult,
  latencyMs: number,
): void {
  if (span.isRecording()) {
    if (result.status !== undefined) span.setAttribute(ATTRIBUTE.httpStatus, result.status);
    span.setAttribute(ATTRIBUTE.webhookResult, result.kind);
    span.setAttribute(ATTRIBUTE.latencyMs, Math.round(latencyMs * 10) / 10);
    if (result.kind !== 'success') {
      span.setAttribute(ATTRIBUTE.errorType, result.reason);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  if (own) span.end();
}

/** What a batch's span says of its request. */
export interface BatchFacts {
  readonly batchId: string;
  readonly destinationId: string;
  readonly calls: number;
  /** One webhook: the batch's span tells its POST (no span of its own). */
  readonly alone: boolean;
}

/**
 * `send`s a batch's request in a span of its own (`deliver batch`) when some of its calls'
 * attempts are sampled (`attempts`, their spans, still open): the child of the first, linked
 * to each and linked back from each, and each attempt's span names the batch. `send` is handed
 * that span, its POSTs' parent (an only webhook's POST is told on it). Without a sampled call,
 * no span: the POSTs run outside any call's trace, which they would otherwise join at random.
 */
export function tracedBatch<T>(
  tracer: Tracer,
  attempts: readonly Span[],
  facts: BatchFacts,
  send: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (attempts.length === 0) return send(undefined);
  const kind = facts.alone ? SpanKind.CLIENT : SpanKind.INTERNAL;
  const span = startLinkedSpan(tracer, 'deliver batch', kind, attempts[0], attempts);
  span.setAttribute(ATTRIBUTE.batchId, facts.batchId);
  span.setAttribute(ATTRIBUTE.batchCalls, facts.calls);
  span.setAttribute(ATTRIBUTE.destinationId, facts.destinationId);
  for (const attempt of attempts) attempt.setAttribute(ATTRIBUTE.batchId, facts.batchId);
  return send(span).finally(() => span.end());
}
