import {
  asJsonObject,
  CALL_TYPES,
  CallType,
  integrationAllows,
  isCallType,
  MAX_CALL_BYTES,
  MAX_EVENT_HEADER_CHARS,
  stringifyIds,
  validateCall,
  WEBHOOKS_INTEGRATION,
} from '@app/contracts';

import { EnrichContext, enrichCall } from './enrich';
import { IngestError } from './ingest.error';

/** Why a call over the size limit is refused. */
export const CALL_TOO_LARGE = `a call may have at most ${MAX_CALL_BYTES} bytes`;

/** A call that passed validation, enriched and serialized once. */
export interface AcceptedCall {
  readonly type: CallType;
  readonly messageId: string;
  /** `userId`, else `anonymousId`: the part of the record key after the source id. */
  readonly userKey: string;
  /** The enriched call's JSON: the bytes every later stage passes on. */
  readonly value: string;
  /** Whether the call's integrations object lets it reach webhook destinations. */
  readonly webhooks: boolean;
  /** A track's event, or a page's or screen's name, cut for a header; for the ledger. */
  readonly event: string | undefined;
}

/** A message of a batch that was refused, with its position in the batch. */
export interface RejectedCall {
  readonly index: number;
  readonly code: 'invalid_call' | 'call_too_large';
  readonly message: string;
  /** The message as sent, minus any `writeKey`, for the rejected topic. */
  readonly value: string;
}

/** What became of a batch. */
export interface Intake {
  readonly accepted: AcceptedCall[];
  readonly rejected: RejectedCall[];
}

/** Validates, enriches and serializes one call; throws `invalid_call` when it is not valid. */
export function takeCall(
  type: CallType,
  call: Record<string, unknown>,
  ctx: EnrichContext,
): AcceptedCall {
  const problem = checkCall(type, call);
  if (problem) throw new IngestError('invalid_call', problem);
  return accept(type, call, ctx);
}

/**
 * Takes each message of a batch body on its own: valid ones are accepted, invalid ones are
 * listed with their index and reason. Throws `invalid_batch` when `batch` is not a non-empty
 * array. `bodyBytes` is the request's size: when it is within one call's limit, no message
 * can exceed it, and measuring each is skipped.
 */
export function takeBatch(
  body: Record<string, unknown>,
  ctx: EnrichContext,
  bodyBytes: number,
): Intake {
  const batch = body.batch;
  if (!Array.isArray(batch) || batch.length === 0) {
    throw new IngestError('invalid_batch', 'batch must be a non-empty array of calls');
  }
  const batchCtx: EnrichContext = {
    ...ctx,
    batchContext: asJsonObject(body.context),
    batchIntegrations: asJsonObject(body.integrations),
  };
  const intake: Intake = { accepted: [], rejected: [] };
  batch.forEach((item: unknown, index) => {
    const refused = (code: RejectedCall['code'], message: string) =>
      intake.rejected.push({ index, code, message, value: serializeRejected(item) });
    const call = asJsonObject(item);
    if (!call) return refused('invalid_call', 'a batch message must be a JSON object');
    if (!isCallType(call.type))
      return refused('invalid_call', `type must be one of ${CALL_TYPES.join(', ')}`);
    if (bodyBytes > MAX_CALL_BYTES && Buffer.byteLength(JSON.stringify(call)) > MAX_CALL_BYTES) {
      return refused('call_too_large', CALL_TOO_LARGE);
    }
    const problem = checkCall(call.type, call);
    if (problem) return refused('invalid_call', problem);
    intake.accepted.push(accept(call.type, call, batchCtx));
  });
  return intake;
}

function checkCall(type: CallType, call: Record<string, unknown>): string | undefined {
  stringifyIds(call);
  return validateCall(type, call);
}

function accept(type: CallType, call: Record<string, unknown>, ctx: EnrichContext): AcceptedCall {
  const enriched = enrichCall(type, call, ctx);
  return {
    type,
    messageId: enriched.messageId as string,
    userKey: (enriched.userId ?? enriched.anonymousId) as string,
    value: JSON.stringify(enriched),
    webhooks: integrationAllows(enriched, WEBHOOKS_INTEGRATION),
    event: eventName(enriched),
  };
}

/** What the delivery ledger shows as a call's event: `event`, else `name`, when a string. */
function eventName(call: Record<string, unknown>): string | undefined {
  const name = typeof call.event === 'string' ? call.event : call.name;
  if (typeof name !== 'string' || name === '') return undefined;
  return name.length > MAX_EVENT_HEADER_CHARS ? name.slice(0, MAX_EVENT_HEADER_CHARS) : name;
}

/** A refused message for the rejected topic: never with a write key. */
export function serializeRejected(item: unknown): string {
  const object = asJsonObject(item);
  if (!object || !('writeKey' in object)) return JSON.stringify(item) ?? 'null';
  return JSON.stringify({ ...object, writeKey: undefined });
}
