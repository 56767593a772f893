import { AnalyticsError } from './errors';
import { LIBRARY } from './library';
import { MAX_CALL_BYTES } from './limits';

/** The call types of the tracking API. */
export type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** A user or group id: a non-empty string, or a number (sent as a string). */
export type Id = string | number;

/** A JSON object of free-form fields (`traits`, `properties`, `context`, `integrations`). */
export type Fields = Record<string, unknown>;

/** What every call may carry. */
export interface CommonParams {
  /** Unique per call; a random UUID when absent. */
  messageId?: string;
  /** When the call happened; absent, the server's time of receipt is used. Never filled in. */
  timestamp?: Date | string;
  /** Context of the call; `context.library` is always set to this library. */
  context?: Fields;
  /** Which destinations receive the call, e.g. `{ All: false, Webhooks: true }`. */
  integrations?: Fields;
}

/** Who the call is about: `userId` or `anonymousId` is required. */
export interface UserParams extends CommonParams {
  userId?: Id;
  anonymousId?: Id;
}

/** `identify`: who the user is. */
export interface IdentifyParams extends UserParams {
  traits?: Fields;
}

/** `track`: what the user did. `event` is required. */
export interface TrackParams extends UserParams {
  event: string;
  properties?: Fields;
}

/** `page`: the user viewed a web page. */
export interface PageParams extends UserParams {
  name?: string;
  category?: string;
  /** `url`, `path`, `title`, `referrer` and anything else about the page. */
  properties?: Fields;
}

/** `screen`: the user viewed an app screen. */
export type ScreenParams = PageParams;

/** `group`: the user belongs to a group. `groupId` is required. */
export interface GroupParams extends UserParams {
  groupId: Id;
  traits?: Fields;
}

/** `alias`: `previousId` (say an anonymous id) and `userId` (the new id) are one user. */
export interface AliasParams extends CommonParams {
  userId: Id;
  previousId: Id;
  anonymousId?: Id;
}

/** The parameters of each call type. */
export interface CallParams {
  identify: IdentifyParams;
  track: TrackParams;
  page: PageParams;
  screen: ScreenParams;
  group: GroupParams;
  alias: AliasParams;
}

/** One call serialized once, as it waits in the queue. */
export interface QueuedCall {
  /** Position in the order calls were made (1, 2, ...). */
  readonly seq: number;
  readonly type: CallType;
  readonly messageId: string;
  /** The call's JSON, as it goes into a request body. */
  readonly json: string;
  /** UTF-8 bytes of `json`. */
  readonly bytes: number;
}

const ID_FIELDS = ['userId', 'anonymousId', 'previousId', 'groupId'] as const;
const OBJECT_FIELDS = ['traits', 'properties', 'context', 'integrations'] as const;
const STRING_FIELDS = ['event', 'name', 'category', 'messageId'] as const;

type Check = (call: Fields) => string | undefined;

const userOrAnonymous: Check = (call) =>
  call.userId === undefined && call.anonymousId === undefined
    ? 'userId or anonymousId is required'
    : undefined;
const required =
  (field: string): Check =>
  (call) =>
    call[field] === undefined ? `${field} is required` : undefined;

/** Required fields of each call type, checked when the method is called. */
const REQUIRED: Readonly<Record<CallType, readonly Check[]>> = {
  identify: [userOrAnonymous],
  track: [required('event'), userOrAnonymous],
  page: [userOrAnonymous],
  screen: [userOrAnonymous],
  group: [required('groupId'), userOrAnonymous],
  alias: [required('userId'), required('previousId')],
};

/**
 * The wire form of a call: the caller's fields, `type`, a `messageId`, `context.library`,
 * ids as strings and a `Date` timestamp as ISO 8601. `null` counts as absent. Throws
 * `invalid_call` when a required field is missing or a field has the wrong kind.
 */
export function buildCall<T extends CallType>(
  type: T,
  params: CallParams[T],
  newMessageId: () => string,
): Fields {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new AnalyticsError('invalid_call', `${type}: the call must be an object`);
  }
  const call: Fields = {};
  for (const [key, value] of Object.entries(params)) if (value != null) call[key] = value;
  let problem = checkFields(call);
  for (const check of REQUIRED[type]) problem ??= check(call);
  if (problem) throw new AnalyticsError('invalid_call', `${type}: ${problem}`);
  for (const field of ID_FIELDS) {
    if (typeof call[field] === 'number') call[field] = String(call[field]);
  }
  if (call.timestamp instanceof Date) call.timestamp = call.timestamp.toISOString();
  delete call.type; // a `type` among the caller's fields (possible from JavaScript) never wins
  return {
    type,
    messageId: call.messageId ?? newMessageId(),
    ...call,
    context: { ...(call.context as Fields), library: { ...LIBRARY } },
  };
}

/** The first field of the wrong kind, named with the rule; undefined when all are fine. */
function checkFields(call: Fields): string | undefined {
  for (const field of ID_FIELDS) {
    const value = call[field];
    if (value === undefined) continue;
    const ok =
      (typeof value === 'string' && value !== '') ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!ok) return `${field} must be a non-empty string or a finite number`;
  }
  for (const field of STRING_FIELDS) {
    const value = call[field];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      return `${field} must be a non-empty string`;
    }
  }
  for (const field of OBJECT_FIELDS) {
    const value = call[field];
    if (value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
      return `${field} must be an object`;
    }
  }
  const timestamp = call.timestamp;
  if (timestamp === undefined || typeof timestamp === 'string') return undefined;
  if (!(timestamp instanceof Date) || Number.isNaN(timestamp.getTime())) {
    return 'timestamp must be a valid Date or an ISO 8601 string';
  }
  return undefined;
}

/**
 * Serializes a built call once, for the queue. Throws `invalid_call` when it cannot be
 * serialized (a cycle, a BigInt) and `call_too_large` over `MAX_CALL_BYTES`.
 */
export function serializeCall(call: Fields, seq: number): QueuedCall {
  const type = call.type as CallType;
  const messageId = call.messageId as string;
  let json: string;
  try {
    json = JSON.stringify(call);
  } catch (error) {
    throw new AnalyticsError('invalid_call', `${type}: the call is not serializable as JSON`, {
      messageIds: [messageId],
      cause: error,
    });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_CALL_BYTES) {
    throw new AnalyticsError(
      'call_too_large',
      `${type}: the call has ${bytes} bytes of JSON; at most ${MAX_CALL_BYTES} are sent`,
      { messageIds: [messageId] },
    );
  }
  return { seq, type, messageId, json, bytes };
}
