import type { SourceSettings } from '@app/settings';

/**
 * Request headers a page may send: what Segment's browser libraries set (analytics-next sends
 * `Authorization: Basic` with every call, and `X-Retry-Count` when it retries). Listed by
 * name: a `*` would not cover `Authorization` (Fetch standard), and a preflight that does not
 * allow it fails for ever, the library retrying it.
 */
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Content-Encoding, X-Retry-Count';

/** Methods of the tracking API (POST calls, GET the settings document). */
export const CORS_ALLOWED_METHODS = 'POST, GET';

/** How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_SECONDS = 7_200;

/** Why a page's request is refused. */
export const ORIGIN_NOT_ALLOWED = 'this source does not accept calls from pages of this origin';

/**
 * Whether a request may use `source`: any request without an `Origin` (not from a browser
 * page: servers, mobile apps), and a page's when the source allows every origin (an empty
 * list) or lists the page's.
 */
export function sourceAllowsOrigin(source: SourceSettings, origin: string | undefined): boolean {
  return (
    origin === undefined ||
    source.allowedOrigins.length === 0 ||
    source.allowedOrigins.includes(origin)
  );
}

/** Headers that let a page of `origin` read an answer (no credentials: none are sent). */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}

/** Headers of a successful preflight from `origin`. */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': CORS_ALLOWED_METHODS,
    'access-control-allow-headers': CORS_ALLOWED_HEADERS,
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
  };
}
