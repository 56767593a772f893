import type { FastifyReply, FastifyRequest } from 'fastify';

import { IncomingRecord } from '@app/kafka';
import {
  ATTRIBUTE,
  httpParent,
  inGivenSpan,
  recordParent,
  Span,
  SpanKind,
  Tracer,
} from '@app/tracing';

/** A tracking route's handler; with traces on it is handed the request's span. */
type TrackingHandler<R extends FastifyRequest> = (
  request: R,
  reply: FastifyReply,
  span?: Span,
) => Promise<string>;

/**
 * A tracking route's handler in a server span, the child of a producer's `traceparent` when
 * the request has one; the handler is handed the span, and the calls it publishes carry the
 * span's context to the router.
 */
export function tracedRequest<R extends FastifyRequest<{ Params: { route: string } }>>(
  tracer: Tracer,
  routes: Readonly<Record<string, unknown>>,
  handler: TrackingHandler<R>,
): (request: R, reply: FastifyReply) => Promise<string> {
  return (request, reply) => {
    const name = request.params.route;
    const route = Object.hasOwn(routes, name) ? `/v1/${name}` : '/v1/:route';
    const parent = httpParent(request.headers);
    const handle = (span: Span) => handler(request, reply, span);
    return inGivenSpan(tracer, `POST ${route}`, SpanKind.SERVER, parent, handle, (span) => {
      span.setAttribute(ATTRIBUTE.httpMethod, 'POST');
      span.setAttribute(ATTRIBUTE.httpRoute, route);
      span.setAttribute(ATTRIBUTE.httpStatus, reply.statusCode);
    });
  };
}

/**
 * An ingress record's handling in a consumer span, the child of the producer's `traceparent`,
 * handed to `handle`.
 */
export function tracedIngress(
  tracer: Tracer,
  record: IncomingRecord,
  handle: (span: Span) => Promise<void>,
): Promise<void> {
  const parent = recordParent(record);
  const name = `process ${record.topic}`;
  return inGivenSpan(tracer, name, SpanKind.CONSUMER, parent, handle, (span) => {
    span.setAttribute(ATTRIBUTE.messagingSystem, 'kafka');
    span.setAttribute(ATTRIBUTE.messagingOperation, 'process');
    span.setAttribute(ATTRIBUTE.messagingDestination, record.topic);
    span.setAttribute(ATTRIBUTE.kafkaPartition, String(record.partition));
    span.setAttribute(ATTRIBUTE.kafkaOffset, record.offset);
  });
}
