import {
  decodeIntegrationsHeader,
  eventNameOf,
  HEADER,
  IntegrationVerdicts,
  isCallType,
  MAX_EVENT_HEADER_CHARS,
  RoutedCallType,
  TOPIC,
} from '@app/contracts';
import { copyHeaders, IncomingRecord, OutgoingRecord } from '@app/kafka';

/** Why a record of the calls topic cannot be routed: its `reason` on the rejected topic. */
export type InvalidCallReason =
  /** No `sluice-source-id` header. */
  | 'missing_source_id'
  /** No `sluice-call-type` header, or not a call type. */
  | 'invalid_call_type'
  /** No key. */
  | 'missing_key'
  /** A key other than `sourceId:userKey` for the record's source. */
  | 'invalid_key'
  /** No value, or an empty one. */
  | 'missing_value'
  /** A `sluice-integrations` header that is not a JSON object of boolean verdicts. */
  | 'invalid_integrations';

/** A call's routing facts, read from its key and headers: the body is never parsed. */
export interface CallFacts {
  readonly sourceId: string;
  /** `userId`, else `anonymousId`: the part of the key after `sourceId:`. */
  readonly userKey: string;
  readonly type: RoutedCallType;
  /** Absent on delete notifications. */
  readonly messageId: string | undefined;
  /** The event (or page or screen name) header, passed on for the delivery ledger. */
  readonly event?: string;
  /** The call's userId and anonymousId headers, passed on for the delivery ledger. */
  readonly userId?: string;
  readonly anonymousId?: string;
  /** On a delete notification: the one destination it is for (absent: every destination). */
  readonly destinationId?: string;
  /** The integrations verdicts for webhook destinations, computed at ingest; all on when absent. */
  readonly integrations: IntegrationVerdicts;
  /** The outbound body, passed on unchanged. */
  readonly value: Buffer;
}

/** The verdicts of a call without an integrations header: every destination on. */
const ALL_ON = decodeIntegrationsHeader(undefined) as IntegrationVerdicts;

/** A call record decoded, or the reason it cannot be. */
export type DecodedCall =
  | { readonly kind: 'call'; readonly call: CallFacts }
  | { readonly kind: 'invalid'; readonly reason: InvalidCallReason };

/**
 * Reads a record of `sluice.calls.v1` (key `sourceId:userKey`, routing facts in headers,
 * docs/architecture.md, "Topics and records"). A delete notification ignores the integrations header, even a
 * malformed one (docs/architecture.md, "Security").
 */
export function decodeCallRecord(record: IncomingRecord): DecodedCall {
  const sourceId = record.headers[HEADER.sourceId]?.toString('utf8');
  if (!sourceId) return invalid('missing_source_id');
  const type = record.headers[HEADER.callType]?.toString('utf8');
  if (type !== 'delete' && !isCallType(type)) return invalid('invalid_call_type');
  if (!record.key || record.key.length === 0) return invalid('missing_key');
  const key = record.key.toString('utf8');
  if (key.length <= sourceId.length + 1 || !key.startsWith(`${sourceId}:`)) {
    return invalid('invalid_key');
  }
  if (!record.value || record.value.length === 0) return invalid('missing_value');
  const header = record.headers[HEADER.integrations]?.toString('utf8');
  const verdicts = type === 'delete' ? ALL_ON : decodeIntegrationsHeader(header);
  if (verdicts === undefined) return invalid('invalid_integrations');
  return {
    kind: 'call',
    call: {
      sourceId,
      userKey: key.slice(sourceId.length + 1),
      type,
      messageId: record.headers[HEADER.messageId]?.toString('utf8'),
      event: record.headers[HEADER.event]?.toString('utf8'),
      userId: record.headers[HEADER.userId]?.toString('utf8'),
      anonymousId: record.headers[HEADER.anonymousId]?.toString('utf8'),
      integrations: verdicts,
      destinationId:
        type === 'delete' ? record.headers[HEADER.destinationId]?.toString('utf8') : undefined,
      value: record.value,
    },
  };
}

/**
 * A call as filters read it: type and event name from its headers, the body parsed at most
 * once, and only when some filter asks for it. The event header is cut at
 * MAX_EVENT_HEADER_CHARS, so a name that long is read from the body.
 */
export class RoutedCall {
  readonly sourceId: string;
  readonly type: RoutedCallType;
  readonly integrations: IntegrationVerdicts;
  readonly destinationId: string | undefined;
  private parsed: { value: unknown } | undefined;

  constructor(private readonly facts: CallFacts) {
    this.sourceId = facts.sourceId;
    this.type = facts.type;
    this.integrations = facts.integrations;
    this.destinationId = facts.destinationId;
  }

  /** Whether the body was parsed (for tests and metrics). */
  get bodyParsed(): boolean {
    return this.parsed !== undefined;
  }

  eventName(): string | undefined {
    const header = this.facts.event;
    if (header === undefined || header.length < MAX_EVENT_HEADER_CHARS) return header;
    return eventNameOf(this.body());
  }

  body(): unknown {
    this.parsed ??= { value: parseBody(this.facts.value) };
    return this.parsed.value;
  }
}

/** The call's JSON; undefined when it is not JSON (ingest never writes such a call). */
function parseBody(value: Buffer): unknown {
  try {
    return JSON.parse(value.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The delivery of a call to one destination: keyed `destinationId:userKey`, the call's bytes
 * unchanged (serialize once), the routing facts in headers; `trace` holds the routing span's
 * `traceparent` when traces are on.
 */
export function deliveryRecord(
  call: CallFacts,
  destinationId: string,
  trace?: Readonly<Record<string, string>>,
): OutgoingRecord {
  const headers: Record<string, string> = {
    [HEADER.sourceId]: call.sourceId,
    [HEADER.callType]: call.type,
    [HEADER.destinationId]: destinationId,
  };
  if (call.messageId !== undefined) headers[HEADER.messageId] = call.messageId;
  if (call.event !== undefined) headers[HEADER.event] = call.event;
  if (call.userId !== undefined) headers[HEADER.userId] = call.userId;
  if (call.anonymousId !== undefined) headers[HEADER.anonymousId] = call.anonymousId;
  if (trace !== undefined) Object.assign(headers, trace);
  return {
    topic: TOPIC.deliveries,
    key: `${destinationId}:${call.userKey}`,
    value: call.value,
    headers,
  };
}

/** A record that cannot be routed, for the rejected topic: as received, plus its reason. */
export function rejectedRecord(record: IncomingRecord, reason: InvalidCallReason): OutgoingRecord {
  const headers = copyHeaders(record);
  headers[HEADER.reason] = reason;
  return {
    topic: TOPIC.ingestRejected,
    key: record.key,
    value: record.value ?? Buffer.alloc(0),
    headers,
  };
}

function invalid(reason: InvalidCallReason): DecodedCall {
  return { kind: 'invalid', reason };
}
