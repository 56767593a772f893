import {
  asJsonObject,
  CALL_TYPES,
  CallType,
  eventNameOf,
  integrationVerdicts,
  IntegrationVerdicts,
  isCallType,
  MAX_CALL_BYTES,
  MAX_CALL_DEPTH,
  MAX_EVENT_HEADER_CHARS,
  nestsDeeperThan,
  parseDateTime,
  stringifyIds,
  validateCall,
} from '@app/contracts';

import { EnrichContext, enrichCall } from './enrich';
import { IngestError } from './ingest.error';

/** Why a call over the size limit is refused. */
export const CALL_TOO_LARGE = `a call may have at most ${MAX_CALL_BYTES} bytes`;

/** Why a call nested too deep is refused. */
export const CALL_TOO_DEEP = `a call may nest objects and arrays at most ${MAX_CALL_DEPTH} levels deep`;

/** A call that passed validation, enriched and serialized once. */
export interface AcceptedCall {
  readonly type: CallType;
  readonly messageId: string;
  /** `userId`, else `anonymousId`: the part of the record key after the source id. */
  readonly userKey: string;
  /** The call's `userId` and `anonymousId` when not empty, for headers (the ledger's search). */
  readonly userId: string | undefined;
  readonly anonymousId: string | undefined;
  /** The enriched call's JSON: the bytes every later stage passes on. */
  readonly value: string;
  /** What the call's integrations object says of webhook destinations. */
  readonly integrations: IntegrationVerdicts;
  /** A track's event, or a page's or screen's name, cut for a header; for the ledger. */
  readonly event: string | undefined;
}

/** A message of a batch that was refused, with its position in the batch. */
export interface RejectedCall {
  readonly index: number;
  readonly code: 'invalid_call' | 'call_too_large' | 'call_too_deep';
  readonly message: string;
  /** The message as sent, minus any `writeKey`, for the rejected topic. */
  readonly value: string;
}

/** What became of a batch. */
export interface Intake {
  readonly accepted: AcceptedCall[];
  readonly rejected: RejectedCall[];
}

/**
 * Validates, enriches and serializes one call; throws `call_too_deep` or `invalid_call` when
 * it is not valid.
 */
export function takeCall(
  type: CallType,
  call: Record<string, unknown>,
  ctx: EnrichContext,
): AcceptedCall {
  if (nestsDeeperThan(call, MAX_CALL_DEPTH)) throw new IngestError('call_too_deep', CALL_TOO_DEEP);
  const problem = checkCall(type, call);
  if (problem) throw new IngestError('invalid_call', problem);
  return accept(type, call, ctx);
}

/**
 * Takes each message of a batch body on its own: valid ones are accepted, invalid ones are
 * listed with their index and reason. Throws `invalid_batch` when `batch` is not a non-empty
 * array, `call_too_deep` when the batch's `context` or `integrations` (merged into every
 * call) nest too deep. `bodyBytes` is the request's size: when it is within one call's limit,
 * no message can exceed it, and measuring each is skipped.
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
  const batchCtx = batchContext(body, ctx);
  const intake: Intake = { accepted: [], rejected: [] };
  batch.forEach((item: unknown, index) => {
    const refused = (code: RejectedCall['code'], message: string) =>
      intake.rejected.push({ index, code, message, value: serializeRejected(item) });
    const call = asJsonObject(item);
    if (!call) return refused('invalid_call', 'a batch message must be a JSON object');
    // Before anything serializes it: measuring a call means stringifying it.
    if (nestsDeeperThan(call, MAX_CALL_DEPTH)) return refused('call_too_deep', CALL_TOO_DEEP);
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

/**
 * What a batch adds to each of its calls: its `context` and `integrations` (a level below the
 * call's top, so one level less of depth to spend), and its `sentAt` when it is a date-time
 * (one that is not is ignored rather than costing the batch).
 */
function batchContext(body: Record<string, unknown>, ctx: EnrichContext): EnrichContext {
  const context = asJsonObject(body.context);
  const integrations = asJsonObject(body.integrations);
  if (
    nestsDeeperThan(context, MAX_CALL_DEPTH - 1) ||
    nestsDeeperThan(integrations, MAX_CALL_DEPTH - 1)
  ) {
    throw new IngestError('call_too_deep', `the batch's context or integrations: ${CALL_TOO_DEEP}`);
  }
  const sentAt = body.sentAt;
  const validSentAt = typeof sentAt === 'string' && !Number.isNaN(parseDateTime(sentAt));
  return {
    ...ctx,
    batchContext: context,
    batchIntegrations: integrations,
    batchSentAt: validSentAt ? sentAt : undefined,
  };
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
    // An empty userId stands for none (analytics-kotlin sends one before identify).
    userKey: (enriched.userId || enriched.anonymousId) as string,
    userId: (enriched.userId as string | undefined) || undefined,
    anonymousId: (enriched.anonymousId as string | undefined) || undefined,
    value: JSON.stringify(enriched),
    integrations: integrationVerdicts(enriched),
    event: eventName(enriched),
  };
}

/** A call's event name (filters and the ledger read it), cut for a header. */
function eventName(call: Record<string, unknown>): string | undefined {
  const name = eventNameOf(call);
  if (name === undefined) return undefined;
  return name.length > MAX_EVENT_HEADER_CHARS ? name.slice(0, MAX_EVENT_HEADER_CHARS) : name;
}

/**
 * A refused message for the rejected topic: never with a write key, and cut at the depth
 * limit (deeper containers become null) when it nests too deep to serialize safely.
 */
export function serializeRejected(item: unknown): string {
  const safe = nestsDeeperThan(item, MAX_CALL_DEPTH) ? cutDepth(item, MAX_CALL_DEPTH) : item;
  const object = asJsonObject(safe);
  if (!object || !('writeKey' in object)) return JSON.stringify(safe) ?? 'null';
  return JSON.stringify({ ...object, writeKey: undefined });
}

/** A copy of parsed JSON with the containers deeper than `maxDepth` replaced by null. */
function cutDepth(value: unknown, maxDepth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (maxDepth <= 0) return null;
  if (Array.isArray(value)) return value.map((item) => cutDepth(item, maxDepth - 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = cutDepth(item, maxDepth - 1);
  return copy;
}
