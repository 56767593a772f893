import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { Injectable, Logger } from '@nestjs/common';

import {
  CALL_TYPES,
  CallType,
  encodeIntegrationsHeader,
  HEADER,
  isCallType,
  MAX_CALL_BYTES,
  MAX_REQUEST_BYTES,
  TOPIC,
} from '@app/contracts';
import { BatchProducer, OutgoingRecord } from '@app/kafka';
import { SettingsCache, SourceSettings } from '@app/settings';
import { ATTRIBUTE, Span, spanTraceHeaders } from '@app/tracing';

import { UsageCounter } from '../usage/usage.counter';
import { ORIGIN_NOT_ALLOWED, sourceAllowsOrigin } from './cors';
import { EnrichContext } from './enrich';
import { IngestError } from './ingest.error';
import { Channel, IngestMetrics } from './ingest.metrics';
import { AcceptedCall, CALL_TOO_LARGE, Intake, takeBatch, takeCall } from './intake';
import { decodeBody, parseJsonObject } from './request-body';

/** What a body is: one call of a known type, a batch, or (Kafka ingress) either, by its shape. */
export type Route = CallType | 'batch' | 'auto';

/** One intake: the bytes, where they came from, and how the sender authenticated. */
export interface IntakeRequest {
  readonly route: Route;
  readonly body: Buffer | undefined;
  readonly contentEncoding?: string;
  /** A write key presented outside the body (Basic auth, or a Kafka header). */
  readonly writeKey?: string;
  /** The client's address (HTTP only). */
  readonly ip?: string;
  /** The `Origin` of a browser page's request, checked against the source's allow-list. */
  readonly origin?: string;
  readonly channel: Channel;
  /** The request's span (traces on): its calls carry its trace context. */
  readonly span?: Span;
}

/** A refused batch message, as listed in the answer. */
export interface RejectedItem {
  readonly index: number;
  readonly code: string;
  readonly message: string;
}

/**
 * Authenticates, validates, enriches and publishes calls, for the HTTP API and the Kafka
 * ingress alike. Resolves only once Kafka acknowledged every accepted call.
 */
@Injectable()
export class TrackingService {
  private readonly logger = new Logger(TrackingService.name);

  constructor(
    private readonly settings: SettingsCache,
    private readonly producer: BatchProducer,
    private readonly metrics: IngestMetrics,
    private readonly usage: UsageCounter,
  ) {}

  /**
   * @returns the refused messages of a batch (empty for a single call)
   * @throws IngestError for a request refused as a whole
   */
  async take(request: IntakeRequest): Promise<RejectedItem[]> {
    // A key presented outside the body is checked before the body is even inflated.
    const early =
      request.writeKey === undefined
        ? undefined
        : this.authenticate(request.writeKey, request.origin);
    const bytes = await decodeBody(request.body, request.contentEncoding, MAX_REQUEST_BYTES);
    // One call's size is checked before parsing when the route says it is one call.
    if (request.route !== 'batch' && request.route !== 'auto') ensureCallSize(bytes.length);
    const body = parseJsonObject(bytes);
    const source = early ?? this.authenticate(body.writeKey, request.origin);
    const ctx: EnrichContext = { receivedAt: Date.now(), ip: request.ip, newMessageId: randomUUID };
    const intake = this.intake(request.route, body, ctx, bytes.length);
    await this.publish(source.id, intake, request.channel, request.span);
    return intake.rejected.map(({ index, code, message }) => ({ index, code, message }));
  }

  private intake(
    route: Route,
    body: Record<string, unknown>,
    ctx: EnrichContext,
    bytes: number,
  ): Intake {
    const kind = route === 'auto' ? shapeOf(body) : route;
    if (kind === 'batch') return takeBatch(body, ctx, bytes);
    if (route === 'auto') ensureCallSize(bytes);
    return { accepted: [takeCall(kind, body, ctx)], rejected: [] };
  }

  private authenticate(writeKey: unknown, origin: string | undefined): SourceSettings {
    const source =
      typeof writeKey === 'string' ? this.settings.sourceByWriteKey(writeKey) : undefined;
    if (!source?.enabled) {
      throw new IngestError('unauthorized', 'unknown or disabled write key');
    }
    if (!sourceAllowsOrigin(source, origin)) {
      throw new IngestError('origin_not_allowed', ORIGIN_NOT_ALLOWED);
    }
    return source;
  }

  private async publish(
    sourceId: string,
    intake: Intake,
    channel: Channel,
    span: Span | undefined,
  ): Promise<void> {
    const trace = span && traceIntake(span, sourceId, intake);
    const records = [
      ...intake.accepted.map((call) => callRecord(sourceId, call, trace)),
      ...intake.rejected.map((r): OutgoingRecord => ({
        topic: TOPIC.ingestRejected,
        key: sourceId,
        value: r.value,
        headers: { [HEADER.reason]: r.code, [HEADER.sourceId]: sourceId },
      })),
    ];
    const started = performance.now();
    try {
      await this.producer.send(records);
      this.metrics.produced('ok', (performance.now() - started) / 1000);
    } catch (error) {
      this.metrics.produced('error', (performance.now() - started) / 1000);
      this.logger.warn(
        `Kafka did not take ${records.length} record(s) of source ${sourceId}: ${String(error)}`,
      );
      throw new IngestError(
        'kafka_unavailable',
        // The producer may still store them after the timeout; the router drops the copies a
        // retry sends within its de-duplication window (same messageId, same source).
        'Kafka did not acknowledge the calls in time; they may still be delivered. Retry with ' +
          'the same messageIds: copies within the de-duplication window are not delivered twice',
      );
    }
    for (const call of intake.accepted) this.metrics.callsAccepted(call.type, channel);
    for (const r of intake.rejected) this.metrics.callRejected(r.code, channel);
    if (intake.accepted.length > 0) this.usage.add(sourceId, intake.accepted.length);
  }
}

/** The record of an accepted call: keyed by source and user, routing facts in headers. */
function callRecord(
  sourceId: string,
  call: AcceptedCall,
  trace?: Readonly<Record<string, string>>,
): OutgoingRecord {
  const headers: Record<string, string> = {
    [HEADER.sourceId]: sourceId,
    [HEADER.callType]: call.type,
    [HEADER.messageId]: call.messageId,
    [HEADER.integrations]: encodeIntegrationsHeader(call.integrations),
  };
  if (call.event !== undefined) headers[HEADER.event] = call.event;
  if (call.userId !== undefined) headers[HEADER.userId] = call.userId;
  if (call.anonymousId !== undefined) headers[HEADER.anonymousId] = call.anonymousId;
  if (trace !== undefined) Object.assign(headers, trace);
  return { topic: TOPIC.calls, key: `${sourceId}:${call.userKey}`, value: call.value, headers };
}

/** Notes the intake on the request's span; the trace headers its calls carry to the router. */
function traceIntake(span: Span, sourceId: string, intake: Intake): Record<string, string> {
  if (span.isRecording()) {
    span.setAttribute(ATTRIBUTE.sourceId, sourceId);
    span.setAttribute(ATTRIBUTE.callsAccepted, intake.accepted.length);
    span.setAttribute(ATTRIBUTE.callsRejected, intake.rejected.length);
  }
  return spanTraceHeaders(span);
}

function ensureCallSize(bytes: number): void {
  if (bytes > MAX_CALL_BYTES) {
    throw new IngestError('call_too_large', CALL_TOO_LARGE);
  }
}

function shapeOf(body: Record<string, unknown>): CallType | 'batch' {
  if (Array.isArray(body.batch)) return 'batch';
  if (isCallType(body.type)) return body.type;
  throw new IngestError(
    'invalid_call',
    `type must be one of ${CALL_TYPES.join(', ')}, or the body a batch`,
  );
}
