import {
  decodeIntegrationsHeader,
  HEADER,
  isCallType,
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
  /** The integrations verdict for webhook destinations, computed at ingest; true when absent. */
  readonly webhooks: boolean;
  /** The outbound body, passed on unchanged. */
  readonly value: Buffer;
}

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
  const verdict = decodeIntegrationsHeader(record.headers[HEADER.integrations]?.toString('utf8'));
  if (verdict === undefined && type !== 'delete') return invalid('invalid_integrations');
  return {
    kind: 'call',
    call: {
      sourceId,
      userKey: key.slice(sourceId.length + 1),
      type,
      messageId: record.headers[HEADER.messageId]?.toString('utf8'),
      event: record.headers[HEADER.event]?.toString('utf8'),
      webhooks: verdict ?? true,
      value: record.value,
    },
  };
}

/**
 * The delivery of a call to one destination: keyed `destinationId:userKey`, the call's bytes
 * unchanged (serialize once), the routing facts in headers.
 */
export function deliveryRecord(call: CallFacts, destinationId: string): OutgoingRecord {
  const headers: Record<string, string> = {
    [HEADER.sourceId]: call.sourceId,
    [HEADER.callType]: call.type,
    [HEADER.destinationId]: destinationId,
  };
  if (call.messageId !== undefined) headers[HEADER.messageId] = call.messageId;
  if (call.event !== undefined) headers[HEADER.event] = call.event;
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
