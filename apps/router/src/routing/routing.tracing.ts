import { HEADER } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';
import { ATTRIBUTE, inGivenSpan, recordParent, Span, SpanKind, Tracer } from '@app/tracing';

import type { RouteOutcome } from './routing.service';

/**
 * Routing one call record in a consumer span, the child of the span that published the call
 * (its `traceparent` header), handed to `route`: the deliveries it produces carry its context.
 */
export function tracedRoute(
  tracer: Tracer,
  record: IncomingRecord,
  route: (span: Span) => Promise<RouteOutcome>,
): Promise<RouteOutcome> {
  const parent = recordParent(record);
  return inGivenSpan(
    tracer,
    `route ${record.topic}`,
    SpanKind.CONSUMER,
    parent,
    route,
    (span, outcome) => {
      span.setAttribute(ATTRIBUTE.messagingSystem, 'kafka');
      span.setAttribute(ATTRIBUTE.messagingOperation, 'process');
      span.setAttribute(ATTRIBUTE.messagingDestination, record.topic);
      span.setAttribute(ATTRIBUTE.kafkaPartition, String(record.partition));
      span.setAttribute(ATTRIBUTE.kafkaOffset, record.offset);
      setHeader(span, ATTRIBUTE.sourceId, headerText(record, HEADER.sourceId));
      setHeader(span, ATTRIBUTE.callType, headerText(record, HEADER.callType));
      setHeader(span, ATTRIBUTE.messageId, headerText(record, HEADER.messageId));
      span.setAttribute(ATTRIBUTE.routeOutcome, outcome.kind);
      if (outcome.kind === 'delivered') {
        span.setAttribute(ATTRIBUTE.destinations, outcome.destinationIds.length);
      }
    },
  );
}

function setHeader(
  span: { setAttribute(name: string, value: string): unknown },
  name: string,
  value: string | undefined,
): void {
  if (value !== undefined) span.setAttribute(name, value);
}
