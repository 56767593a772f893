import { randomUUID } from 'node:crypto';

import { AnalyticsError } from './errors';
import { fetchTransport, Transport } from './transport';

/** Options of `new Analytics(...)`; `writeKey` and `endpoint` are required. */
export interface AnalyticsOptions {
  /** The source's write key, sent as the HTTP Basic user name. */
  readonly writeKey: string;
  /**
   * Base URL of the tracking API, for example `https://ingest.example.com`; required, with no
   * default, so a forgotten one fails at construction rather than losing calls to an address
   * never meant. `/v1/batch` is appended unless the path already ends in `/v1/batch` or
   * `/v1/import`.
   */
  readonly endpoint: string;
  /** Send once this many calls are queued (default 20; 1 sends every call on its own). */
  readonly flushAt?: number;
  /** Send what is queued at most this long after a call was queued (default 5,000 ms). */
  readonly flushAfterMs?: number;
  /** Calls the queue holds at most; one more is refused with `queue_full` (default 10,000). */
  readonly maxQueuedCalls?: number;
  /** Requests in flight at once (default 4). Order across requests is not kept. */
  readonly maxInFlightRequests?: number;
  /** Retries of a request after a network error, a timeout, 5xx, 408 or 429 (default 3). */
  readonly maxRetries?: number;
  /** Wait before the first retry; it doubles with each retry (default 200 ms). */
  readonly retryMinDelayMs?: number;
  /** The longest backoff between retries (default 10,000 ms). */
  readonly retryMaxDelayMs?: number;
  /**
   * The longest `Retry-After` honoured (default 60,000 ms); a server asking for a longer wait
   * fails the request at once with `send_failed` rather than being retried early.
   */
  readonly maxRetryAfterMs?: number;
  /** Abort an attempt that has no answer after this long (default 10,000 ms). */
  readonly timeoutMs?: number;
  /**
   * Called with every problem found after a method returned: calls the server rejected, a
   * request refused, retries exhausted. Default: one line on stderr.
   */
  readonly onError?: (error: AnalyticsError) => void;
  /**
   * Log what is queued and sent (ids, counts, sizes, statuses; never payloads or the write
   * key). Default: on when the `DEBUG` environment variable names `analytics`.
   */
  readonly debug?: boolean;
  /** Where debug lines and the default error lines go (default stderr). */
  readonly log?: (line: string) => void;
  /** Sends one request (default: Node's `fetch`). */
  readonly transport?: Transport;
  /** The clock for `sentAt` (default `Date.now`). */
  readonly now?: () => number;
  /** Makes a `messageId` for calls without one (default `crypto.randomUUID`). */
  readonly newMessageId?: () => string;
  /** A number in [0, 1) for backoff jitter (default `Math.random`). */
  readonly random?: () => number;
}

/** The options with every default applied, checked. */
export interface Settings {
  readonly url: string;
  readonly authorization: string;
  readonly flushAt: number;
  readonly flushAfterMs: number;
  readonly maxQueuedCalls: number;
  readonly maxInFlightRequests: number;
  readonly maxRetries: number;
  readonly retryMinDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly timeoutMs: number;
  readonly onError: (error: AnalyticsError) => void;
  readonly debug: boolean;
  readonly log: (line: string) => void;
  readonly transport: Transport;
  readonly now: () => number;
  readonly newMessageId: () => string;
  readonly random: () => number;
}

const writeStderr = (line: string): void => void process.stderr.write(`${line}\n`);

/**
 * Applies the defaults and checks the options; `debugVariable` is the `DEBUG` environment
 * variable. Throws `invalid_options` naming the option and the rule.
 */
export function resolveOptions(options: AnalyticsOptions, debugVariable?: string): Settings {
  if (typeof options?.writeKey !== 'string' || options.writeKey === '') {
    throw new AnalyticsError('invalid_options', 'writeKey must be a non-empty string');
  }
  const whole = (name: keyof AnalyticsOptions, fallback: number, min: number): number => {
    const value = options[name] ?? fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      throw new AnalyticsError('invalid_options', `${name} must be a whole number >= ${min}`);
    }
    return value;
  };
  const log = options.log ?? writeStderr;
  const settings: Settings = {
    url: batchUrl(options.endpoint),
    authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`,
    flushAt: whole('flushAt', 20, 1),
    flushAfterMs: whole('flushAfterMs', 5_000, 1),
    maxQueuedCalls: whole('maxQueuedCalls', 10_000, 1),
    maxInFlightRequests: whole('maxInFlightRequests', 4, 1),
    maxRetries: whole('maxRetries', 3, 0),
    retryMinDelayMs: whole('retryMinDelayMs', 200, 0),
    retryMaxDelayMs: whole('retryMaxDelayMs', 10_000, 0),
    maxRetryAfterMs: whole('maxRetryAfterMs', 60_000, 0),
    timeoutMs: whole('timeoutMs', 10_000, 1),
    onError: options.onError ?? ((error) => log(`analytics: ${error.code}: ${error.message}`)),
    debug: options.debug ?? debugNamesAnalytics(debugVariable),
    log,
    transport: options.transport ?? fetchTransport,
    now: options.now ?? Date.now,
    newMessageId: options.newMessageId ?? randomUUID,
    random: options.random ?? Math.random,
  };
  if (settings.flushAt > settings.maxQueuedCalls) {
    throw new AnalyticsError('invalid_options', 'flushAt must be at most maxQueuedCalls');
  }
  return settings;
}

/**
 * The URL requests go to: the endpoint with `/v1/batch` appended unless its path already
 * ends in `/v1/batch` or `/v1/import` (trailing slashes ignored; a query string is kept).
 */
export function batchUrl(endpoint: string): string {
  if (endpoint === undefined || endpoint === null || endpoint === '') {
    throw new AnalyticsError(
      'invalid_options',
      "endpoint is required: the tracking API's base URL, for example https://ingest.example.com",
    );
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new AnalyticsError('invalid_options', 'endpoint must be an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AnalyticsError('invalid_options', 'endpoint must be an http or https URL');
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = /\/v1\/(batch|import)$/.test(path) ? path : `${path}/v1/batch`;
  return url.toString();
}

/**
 * Whether a `DEBUG` value turns on this library's logging, as the `debug` convention reads
 * it: names separated by commas or spaces, `*` as a wildcard, `-name` excluding.
 */
export function debugNamesAnalytics(value: string | undefined): boolean {
  const names = (value ?? '').split(/[\s,]+/).filter(Boolean);
  const matches = (pattern: string) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(
      'analytics',
    );
  if (names.some((name) => name.startsWith('-') && matches(name.slice(1)))) return false;
  return names.some((name) => !name.startsWith('-') && matches(name));
}
