/** Stable codes of the errors the library throws or reports. */
export type AnalyticsErrorCode =
  /** The constructor's options are not valid (thrown). */
  | 'invalid_options'
  /** A call misses a required field or has a field of the wrong kind (thrown). */
  | 'invalid_call'
  /** A call's JSON is over `MAX_CALL_BYTES` (thrown). */
  | 'call_too_large'
  /** The queue holds `maxQueuedCalls` calls already (thrown; the call is not queued). */
  | 'queue_full'
  /** `close()` was called; no more calls are taken (thrown). */
  | 'closed'
  /** The server accepted the request but listed this call as rejected (reported). */
  | 'call_rejected'
  /** The server refused the whole request with a status that is not retried (reported). */
  | 'request_refused'
  /** Every attempt failed with a retryable outcome (reported). */
  | 'send_failed';

/** What went wrong beside the message: which calls, and the last answer. */
export interface AnalyticsErrorDetails {
  /** The `messageId`s of the calls the error is about. */
  readonly messageIds?: readonly string[];
  /** The last HTTP status, when there was an answer. */
  readonly status?: number;
  /** The server's error code (its `code` field), when it gave one. */
  readonly serverCode?: string;
  readonly cause?: unknown;
}

/**
 * An error of the client library. Problems found when a method is called are thrown at once;
 * problems found while sending (after the call returned) reach the `onError` option.
 */
export class AnalyticsError extends Error {
  readonly messageIds: readonly string[];
  readonly status?: number;
  readonly serverCode?: string;

  constructor(
    readonly code: AnalyticsErrorCode,
    message: string,
    details: AnalyticsErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AnalyticsError';
    this.messageIds = details.messageIds ?? [];
    this.status = details.status;
    this.serverCode = details.serverCode;
  }
}
