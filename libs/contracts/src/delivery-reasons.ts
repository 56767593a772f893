/**
 * Every `reason` a delivery's outcome, retry or dead letter can carry: the dispatcher's codes,
 * defined once so that the admin API can refuse a filter on a reason that never occurs. The
 * dispatcher's spec ties its reason types to this list.
 */
export const DELIVERY_REASONS = [
  'timeout' /* no answer within the request deadline */,
  'connection_error' /* refused, reset, DNS: no HTTP answer */,
  'http_5xx' /* a server error answer */,
  'http_408' /* request timeout answer */,
  'http_429' /* too many requests answer */,
  'http_3xx' /* a redirect (never followed) */,
  'http_4xx' /* any other client error answer */,
  'tls_error' /* the certificate did not verify: nothing sent */,
  'ssrf_refused' /* the address is internal and not allowed */,
  'invalid_url' /* not an http(s) URL, or one with credentials */,
  'permanent_failure' /* every webhook failed for good, for different reasons */,
  'retry_window_closed' /* the next attempt would fall after the retry window */,
  'secret_unreadable' /* the shared secret could not be opened with this key */,
  'webhooks_removed' /* the webhooks a retry covered were all removed */,
  'breaker_open' /* the destination's circuit breaker held it back */,
  'destination_busy' /* the destination's in-flight bound was full */,
  'rate_limited' /* the destination's rate limit held it back */,
  'destination_disabled' /* discarded: the destination was disabled */,
  'destination_deleted' /* discarded: the destination was deleted */,
  'ordering_suspended_pending' /* ordered: too many of its user's calls waited behind it */,
  'ordering_suspended_hold_time' /* ordered: it held its user's calls as long as allowed */,
  'ordering_suspended_partition_full' /* ordered: held lanes filled its partition */,
  'ordering_suspended_ordering_off' /* ordered: ordering was turned off while it was held */,
  'ordering_suspended_breaker_open' /* ordered: its breaker is open; it waits on a tier */,
] as const;

/** A delivery's reason code. */
export type DeliveryReason = (typeof DELIVERY_REASONS)[number];
