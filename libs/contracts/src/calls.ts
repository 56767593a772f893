/** The call types of the tracking API, as they appear in a call's `type` field. */
export const CALL_TYPES = ['track', 'page', 'screen', 'identify', 'group', 'alias'] as const;

/** A call type a producer can send. */
export type CallType = (typeof CALL_TYPES)[number];

/** Call types that travel through the pipeline: producers' calls plus deletion notices. */
export type RoutedCallType = CallType | 'delete';

/** True when `value` names a call type of the tracking API. */
export function isCallType(value: unknown): value is CallType {
  return typeof value === 'string' && (CALL_TYPES as readonly string[]).includes(value);
}
