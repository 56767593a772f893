/**
 * ISO 8601 date-time with a time zone: `2026-01-02T03:04:05Z`, `...05.123+07:00`, and the
 * offset without a colon (`+0700`) that some clients send. A zone is required: a time without
 * one would depend on the server's zone.
 */
export const ISO_DATE_TIME =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})$/;

/** Epoch milliseconds of an ISO 8601 date-time, or NaN when it is not one. */
export function parseDateTime(value: string): number {
  return ISO_DATE_TIME.test(value) ? Date.parse(value) : NaN;
}
