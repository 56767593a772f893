import { TransportResponse } from './transport';

/** Statuses retried besides every 5xx; any other answer below 200 or from 300 up is final. */
export const RETRYABLE_STATUS: readonly number[] = [
  408 /* request timeout */,
  429 /* too many requests: the next attempt waits at least its Retry-After */,
];

/** The most characters of a server's error message quoted in an error. */
const MAX_QUOTED_CHARS = 200;

/** What one attempt came to. */
export type AttemptOutcome =
  | { readonly kind: 'ok'; readonly body: string }
  | {
      readonly kind: 'retry';
      readonly reason: string;
      readonly status?: number;
      readonly retryAfterMs?: number;
    }
  | {
      readonly kind: 'dead';
      readonly reason: string;
      readonly status: number;
      readonly serverCode?: string;
    };

/** Classifies an HTTP answer: 2xx ok; 5xx, 408 and 429 retried; anything else final. */
export function classifyResponse(response: TransportResponse, nowMs: number): AttemptOutcome {
  const { status } = response;
  if (status >= 200 && status < 300) return { kind: 'ok', body: response.body };
  const { code, message } = errorBody(response.body);
  const reason = `the server answered ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
  if (status >= 500 || RETRYABLE_STATUS.includes(status)) {
    return {
      kind: 'retry',
      reason,
      status,
      retryAfterMs: parseRetryAfter(response.retryAfter, nowMs),
    };
  }
  return { kind: 'dead', reason, status, serverCode: code };
}

/** `{ code, message }` of an error body (the tracking API's shape), when it has them. */
function errorBody(body: string): { code?: string; message?: string } {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { code, message } = parsed as Record<string, unknown>;
    return {
      code: typeof code === 'string' ? code.slice(0, MAX_QUOTED_CHARS) : undefined,
      message: typeof message === 'string' ? message.slice(0, MAX_QUOTED_CHARS) : undefined,
    };
  } catch {
    return {}; // not JSON: the status says enough
  }
}

/**
 * Milliseconds a `Retry-After` header asks to wait (seconds, or an HTTP date); undefined
 * when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/**
 * The wait before retry number `retry` (1 for the first): doubling from `minMs`, capped at
 * `maxMs`, with the upper half jittered so that many clients do not retry in step.
 */
export function backoffMs(
  retry: number,
  minMs: number,
  maxMs: number,
  random: () => number,
): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
