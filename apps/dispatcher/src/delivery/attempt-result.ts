/**
 * What one POST to a webhook came to (`AttemptResult`), and how an HTTP status or a failed
 * request is read as one; `webhook-client.ts` sends the POST.
 */

/** Why an attempt failed in a way worth trying again. */
export type RetryableReason = 'timeout' | 'connection_error' | 'http_5xx' | 'http_408' | 'http_429';

/** Why an attempt failed for good. */
export type PermanentReason =
  'http_3xx' | 'http_4xx' | 'tls_error' | 'ssrf_refused' | 'invalid_url';

/** What one POST to one webhook came to. */
export type AttemptResult =
  | { readonly kind: 'success'; readonly status: number }
  | {
      readonly kind: 'retryable';
      readonly reason: RetryableReason;
      readonly status?: number;
      /** From a 429's or 503's `Retry-After`, when it had one. */
      readonly retryAfterMs?: number;
      readonly detail: string;
      /** The start of the answer's body as text, when it had one (see `responseText`). */
      readonly body?: string;
    }
  | {
      readonly kind: 'permanent';
      readonly reason: PermanentReason;
      readonly status?: number;
      readonly detail: string;
      readonly body?: string;
    };

/** Certificate verification failures: the handshake stops, no request is sent. */
const TLS_VERIFY_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The 4xx answers worth trying again; every 5xx is too. Any other non-2xx is permanent, 3xx
 * included (redirects are not followed).
 */
const RETRYABLE_STATUS: ReadonlyMap<number, RetryableReason> = new Map([
  [408 /* request timeout */, 'http_408'],
  [429 /* too many requests: Retry-After honoured */, 'http_429'],
]);

/** The outcome an HTTP status means (docs/architecture.md, "Delivery semantics"). */
export function classifyStatus(
  status: number,
  retryAfter?: string | string[],
  now: number = Date.now(),
): AttemptResult {
  if (status >= 200 && status < 300) return { kind: 'success', status };
  const detail = `HTTP ${status}`;
  const reason = status >= 500 ? 'http_5xx' : RETRYABLE_STATUS.get(status);
  if (reason !== undefined) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return retryAfterMs === undefined
      ? { kind: 'retryable', reason, status, detail }
      : { kind: 'retryable', reason, status, detail, retryAfterMs };
  }
  const permanent = status >= 300 && status < 400 ? 'http_3xx' : 'http_4xx';
  return { kind: 'permanent', reason: permanent, status, detail };
}

/** What a failed request means: a deadline, a refused address, a certificate, or the network. */
export function classifyError(error: unknown, timedOut: boolean, timeoutMs: number): AttemptResult {
  if (timedOut)
    return { kind: 'retryable', reason: 'timeout', detail: `no answer in ${timeoutMs} ms` };
  const codes = errorCodes(error);
  if (codes.includes('ERR_SSRF_REFUSED')) {
    return {
      kind: 'permanent',
      reason: 'ssrf_refused',
      detail: 'the host resolves to an internal address',
    };
  }
  const tls = codes.find((code) => TLS_VERIFY_CODES.has(code));
  if (tls)
    return { kind: 'permanent', reason: 'tls_error', detail: `certificate not verified (${tls})` };
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT') || codes.includes('UND_ERR_HEADERS_TIMEOUT')) {
    return { kind: 'retryable', reason: 'timeout', detail: `no answer in ${timeoutMs} ms` };
  }
  return { kind: 'retryable', reason: 'connection_error', detail: codes[0] ?? describe(error) };
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms from now; undefined when absent or bad. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number,
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  // Otherwise only an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`), never a number read as one.
  if (!/^\s*[A-Za-z]{3},/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The `code`s along an error's cause chain. */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string') codes.push(code);
    current = cause;
  }
  return codes;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown error';
}

/** Control characters (C0, DEL and C1) but tab, line feed and carriage return: shown as U+FFFD. */
const UNSAFE_CONTROLS = /(?![\t\n\r])\p{Cc}/gu;

/**
 * The start of an answer's body as text safe to store and show: UTF-8 decoded, a character cut
 * by the byte limit left out, invalid bytes and control characters replaced by U+FFFD.
 */
export function responseText(bytes: Buffer): string {
  // `stream: true` holds back a trailing incomplete sequence instead of replacing it.
  const text = new TextDecoder('utf-8').decode(bytes, { stream: true });
  return text.replace(UNSAFE_CONTROLS, '\uFFFD');
}
