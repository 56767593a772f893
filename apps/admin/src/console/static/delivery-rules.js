// What a destination's delivery settings say, and the bodies their forms send: pure functions
// (no DOM, no imports), so unit specs load this module on its own. The admin API alone decides
// what is valid; these only turn what was typed into JSON and describe what the API answered.

/** Batching's bounds and defaults, as docs/api.md ("Batched delivery") gives them. */
export const BATCH_BOUNDS = [
  { key: 'maxCalls', label: 'Max calls', unit: 'calls', min: 1, max: 4_000, byDefault: 100 },
  {
    key: 'maxBytes',
    label: 'Max bytes',
    unit: 'bytes',
    min: 1_024,
    max: 16_777_216,
    byDefault: 1_048_576,
  },
  { key: 'maxWaitMs', label: 'Max wait (ms)', unit: 'ms', min: 0, max: 60_000, byDefault: 1_000 },
];

/** Ordered delivery's bounds and defaults, as docs/api.md ("Ordered delivery") gives them. */
export const ORDERING_BOUNDS = [
  {
    key: 'maxPendingCalls',
    label: 'Max pending calls',
    unit: 'calls',
    min: 1,
    max: 1_000,
    byDefault: 100,
  },
  {
    key: 'maxHoldSeconds',
    label: 'Max hold (seconds)',
    unit: 'seconds',
    min: 1,
    max: 3_600,
    byDefault: 600,
  },
];

/** The signature modes, with what each one sends. */
export const SIGNATURE_MODES = [
  { value: 'x-signature', text: "x-signature: Segment's X-Signature (hex HMAC-SHA1 of the body)" },
  {
    value: 'standard-webhooks',
    text: 'standard-webhooks: webhook-id, webhook-timestamp, webhook-signature (needs a whsec_ secret)',
  },
];

/** A signature mode with what it sends; a mode this console does not know, as the API gave it. */
export function signatureModeText(mode) {
  return SIGNATURE_MODES.find((m) => m.value === mode)?.text ?? String(mode);
}

/** The longest rotation overlap the API takes, in seconds (30 days). */
export const MAX_OVERLAP_SECONDS = 2_592_000;

/**
 * A typed number: undefined when empty (the field is left out), a number when it is a numeral,
 * else the text as typed, which the API refuses naming the field and its rule.
 */
export function typedNumber(text) {
  const raw = String(text ?? '').trim();
  if (!raw) return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : raw;
}

/** `PATCH` body turning batching on with the bounds typed (an empty one takes its default). */
export function batchingBody(typed) {
  return { batching: typedBounds(BATCH_BOUNDS, typed) };
}

/** What a destination's batching does, in a sentence. */
export function batchingText(batching) {
  if (!batching) return 'Off: one call a request.';
  const [calls, bytes, wait] = BATCH_BOUNDS.map(({ key }) => grouped(batching[key]));
  return `On: up to ${calls} calls or ${bytes} bytes a request, the first call waiting at most ${wait} ms for more.`;
}

/** `PATCH` body turning ordering on with the bounds typed (an empty one takes its default). */
export function orderingBody(typed) {
  return { ordering: typedBounds(ORDERING_BOUNDS, typed) };
}

/** What a destination's ordering does, in a sentence. */
export function orderingText(ordering) {
  if (!ordering) {
    return "Off: a failed call goes to the retry tiers, and its user's later calls may reach the receiver before it.";
  }
  const [pending, hold] = ORDERING_BOUNDS.map(({ key }) => grouped(ordering[key]));
  return `On: each user's calls reach the receiver in order; while one is retried, up to ${pending} of that user's later calls wait behind it, for at most ${hold} seconds, before the user's ordering is suspended.`;
}

/** A bound's range and default (batching's or ordering's), for its field's hint. */
export function boundHint(bound) {
  return `${grouped(bound.min)} to ${grouped(bound.max)} ${bound.unit}; empty: ${grouped(bound.byDefault)}`;
}

/** What sending a `traceparent` does for a destination, in a sentence. */
export function traceparentText(on) {
  return on
    ? "On: each POST carries the W3C traceparent of the dispatcher's span for it, while the dispatcher exports traces."
    : 'Off: POSTs carry no traceparent.';
}

/** A destination's delivery settings in a few words, for the list of a source's destinations. */
export function deliverySummary(destination) {
  const parts = [destination.signatureMode ?? 'x-signature'];
  if (destination.batching)
    parts.push(`batches of up to ${grouped(destination.batching.maxCalls)}`);
  if (destination.ordering) parts.push('ordered per user');
  if (destination.sendTraceparent) parts.push('traceparent');
  return parts.join(', ');
}

/** What a destination's signatures are, with its mode and whether a secret is set. */
export function secretText(mode, secretSet) {
  if (mode === 'standard-webhooks') {
    return secretSet
      ? 'A shared secret is set: every POST carries webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks, HMAC-SHA256).'
      : 'No shared secret is set: POSTs carry webhook-id and webhook-timestamp, and no webhook-signature.';
  }
  return secretSet
    ? 'A shared secret is set: every POST carries X-Signature (HMAC-SHA1 of the body).'
    : 'No shared secret is set: POSTs are not signed.';
}

/** What the mode asks of a secret, for the secret fields' hints. */
export function secretHint(mode) {
  return mode === 'standard-webhooks'
    ? 'Never shown again, not even here. A whsec_ secret: whsec_ and 24 to 64 random bytes in base64, e.g. echo "whsec_$(openssl rand -base64 32)".'
    : 'Never shown again, not even here.';
}

/**
 * The last rotation's overlap at `nowMs`: none, still signing with the previous secret until
 * `until`, or ended at `at` (both ISO 8601, as the API gave them).
 */
export function overlapState(previousSecretExpiresAt, nowMs) {
  if (!previousSecretExpiresAt) return { kind: 'none' };
  const endsMs = Date.parse(previousSecretExpiresAt);
  if (Number.isNaN(endsMs)) return { kind: 'none' };
  return endsMs > nowMs
    ? { kind: 'overlap', until: previousSecretExpiresAt }
    : { kind: 'ended', at: previousSecretExpiresAt };
}

/** `POST .../destinations/:destId/shared-secret/rotate` body: the new secret and the overlap when one is typed. */
export function rotationBody(sharedSecret, overlapText) {
  const overlapSeconds = typedNumber(overlapText);
  return overlapSeconds === undefined ? { sharedSecret } : { sharedSecret, overlapSeconds };
}

/** The bounds typed, each a number or as typed; an empty one is left out (it takes its default). */
function typedBounds(bounds, typed) {
  const body = {};
  for (const { key } of bounds) {
    const value = typedNumber(typed[key]);
    if (value !== undefined) body[key] = value;
  }
  return body;
}

/** 1048576 as `1,048,576`: digits grouped by three, the same in every locale. */
function grouped(value) {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
