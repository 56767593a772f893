/**
 * How a destination signs its webhook requests (docs/api.md, "Signatures"):
 * - `x-signature`: Segment's `X-Signature`, the lowercase hex HMAC-SHA1 of the body (the default);
 * - `standard-webhooks`: the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature` (HMAC-SHA256 of `id.timestamp.body` with a `whsec_` secret).
 */
export const SIGNATURE_MODES = ['x-signature', 'standard-webhooks'] as const;

/** One of {@link SIGNATURE_MODES}. */
export type SignatureMode = (typeof SIGNATURE_MODES)[number];

/** Every destination's mode until it chooses another: today's `X-Signature`. */
export const DEFAULT_SIGNATURE_MODE: SignatureMode = 'x-signature';

/** Longest overlap a secret rotation can keep the previous secret valid for: 30 days. */
export const MAX_SECRET_OVERLAP_SECONDS = 30 * 86_400;
