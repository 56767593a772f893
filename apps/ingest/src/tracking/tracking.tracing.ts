import type { FastifyReply, FastifyRequest } from 'fastify';

import { IncomingRecord } from '@app/kafka';
import { ATTRIBUTE, httpParent, inSpan, recordParent, SpanKind, Tracer } from '@app/tracing';

type Handler<R extends FastifyRequest> = (request: R, reply: FastifyReply) => Promise<string>;

/**
 * A tracking route's handler in a server span, the child of a producer's `traceparent` when
 * the request has one; the calls it publishes carry the span's context to the router.
 */
export function tracedRequest<R extends FastifyRequest<{ Params: { route: string } }>>(
  tracer: Tracer,
  routes: Readonly<Record<string, unknown>>,
  handler: Handler<R>,
): Handler<R> {
  return (request, reply) => {
    const name = request.params.route;
    const route = Object.hasOwn(routes, name) ? `/v1/${name}` : '/v1/:route';
    return inSpan(
      tracer,
      `POST ${route}`,
      SpanKind.SERVER,
      httpParent(request.headers),
      async (span) => {
        const body = await handler(request, reply);
        if (span.isRecording()) {
          span.setAttribute(ATTRIBUTE.httpMethod, 'POST');
          span.setAttribute(ATTRIBUTE.httpRoute, route);
          span.setAttribute(ATTRIBUTE.httpStatus, reply.statusCode);
        }
        return body;
      },
    );
  };
}

/** An ingress record's handling in a consumer span, the child of the producer's `traceparent`. */
export function tracedIngress(
  tracer: Tracer,
  record: IncomingRecord,
  handle: () => Promise<void>,
): Promise<void> {
  return inSpan(
    tracer,
    `process ${record.topic}`,
    SpanKind.CONSUMER,
    recordParent(record.headers),
    (span) => {
      if (span.isRecording()) {
        span.setAttribute(ATTRIBUTE.messagingSystem, 'kafka');
        span.setAttribute(ATTRIBUTE.messagingOperation, 'process');
        span.setAttribute(ATTRIBUTE.messagingDestination, record.topic);
        span.setAttribute(ATTRIBUTE.kafkaPartition, String(record.partition));
        span.setAttribute(ATTRIBUTE.kafkaOffset, record.offset);
      }
      return handle();
    },
  );
}
