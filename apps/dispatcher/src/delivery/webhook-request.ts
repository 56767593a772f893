import { createHash } from 'node:crypto';

import { refusedWebhookHeader, type SignatureMode } from '@app/contracts';
import { WebhookSettings } from '@app/settings';
import { HmacSha1, StandardWebhooksSigner, whsecKey } from '@app/signing';

/**
 * Everything a webhook request carries but its URL and body (docs/api.md, "What a webhook
 * receives"): the method, the headers Sluice sets, the signature, and the static headers that
 * can be sent. The names a static header may not take are `RESERVED_WEBHOOK_HEADERS` in
 * `@app/contracts`, which the admin API checks when a webhook is saved; this module's spec
 * ties that list to what is sent.
 */

/** The method of every webhook request. */
export const WEBHOOK_METHOD = 'POST';

/** Sent as `User-Agent`. */
export const USER_AGENT = 'Sluice/1.0';

/** Sent as `Content-Type`: every body is one JSON object. */
export const CONTENT_TYPE = 'application/json';

/**
 * `x-signature` mode: the lowercase hex HMAC-SHA1 of the body, when the destination has a
 * shared secret. During a rotation's overlap it is the previous secret's, so that receivers
 * not yet given the new secret keep verifying.
 */
export const SIGNATURE_HEADER = 'x-signature';

/**
 * `x-signature` mode, only during a rotation's overlap: the hex HMAC-SHA1 of the body by the
 * new (current) secret. After the overlap `X-Signature` carries that one and this is not sent.
 */
export const NEXT_SIGNATURE_HEADER = 'x-signature-next';

/** `standard-webhooks` mode: the message id, the send time (epoch seconds), the signatures. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/**
 * The reserved headers the HTTP client writes itself: `Host` from the URL and
 * `Content-Length` from the body (its connection-level `Connection` is refused as such).
 */
export const CLIENT_SET_HEADERS: readonly string[] = ['host', 'content-length'];

/** Signs body bytes: the destination's opened shared secret. */
export interface BodySigner {
  hex(body: Buffer): string;
}

/** Signs a Standard Webhooks message: `v1,<base64>` of `id.timestamp.body`. */
export interface MessageSigner {
  sign(id: string, timestampSeconds: number, body: Buffer): string;
}

/** One secret's signers, made once per settings snapshot. */
export interface SecretSigners {
  /** `X-Signature`'s (the UTF-8 bytes of the secret are the key). */
  readonly hex: BodySigner;
  /** Standard Webhooks'; undefined when the secret is not a `whsec_` one. */
  readonly standard?: MessageSigner;
}

/** The signers of one opened secret. */
export function secretSigners(secret: string): SecretSigners {
  const key = whsecKey(secret);
  return {
    hex: new HmacSha1(secret),
    standard: key === undefined ? undefined : new StandardWebhooksSigner(key),
  };
}

/** How one delivery is signed: its destination's mode and the secrets that sign now. */
export interface Signing {
  readonly mode: SignatureMode;
  /** The destination's secret; undefined when it has none. */
  readonly current?: SecretSigners;
  /** A rotation's previous secret, only while its overlap lasts. */
  readonly previous?: SecretSigners;
}

/** What a Standard Webhooks request says of its message. */
export interface MessageFacts {
  /** The call's messageId (a delete notification's id): stable over every attempt and replay. */
  readonly messageId: string | undefined;
  /** Now, epoch milliseconds: `webhook-timestamp` is the time of this attempt. */
  readonly nowMs: number;
}

/** A `standard-webhooks` destination whose secret is not a `whsec_` one (never saved so). */
export class UnsignableError extends Error {
  readonly code = 'secret_not_whsec';
  constructor() {
    super('the secret of a standard-webhooks destination is not a whsec_ secret');
    this.name = 'UnsignableError';
  }
}

/**
 * Whether a rotation's previous secret still signs at `nowMs`: it does until its expiry,
 * exclusive. A pure decision, so the dispatcher needs no settings reload when an overlap ends.
 */
export function previousSecretSigns(
  expiresAtMs: number | null | undefined,
  nowMs: number,
): boolean {
  return expiresAtMs !== null && expiresAtMs !== undefined && nowMs < expiresAtMs;
}

/** Header-safe ids are sent as they are; any other is replaced by a digest of it. */
const HEADER_SAFE_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * The `webhook-id` of a delivery: its call's messageId (docs/api.md, "Signatures", says why
 * not a delivery id), or when that cannot travel in a header, `msg_` and the base64url
 * SHA-256 of it.
 */
export function webhookId(messageId: string | undefined, body: Buffer): string {
  if (messageId !== undefined && HEADER_SAFE_ID.test(messageId)) return messageId;
  const digest = createHash('sha256')
    .update(messageId ?? body)
    .digest('base64url');
  return `msg_${digest}`;
}

/**
 * The headers Sluice sets on one delivery's requests (lower case), the same for every webhook
 * of the destination: `User-Agent`, `Content-Type` and the signature headers of the mode.
 * `message` is required in `standard-webhooks` mode (a batch passes its own id).
 * @throws UnsignableError when a Standard Webhooks destination's secret is not `whsec_`
 */
export function sluiceHeaders(
  body: Buffer,
  signing?: Signing,
  message?: MessageFacts,
): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': USER_AGENT,
    'content-type': CONTENT_TYPE,
  };
  if (signing === undefined) return headers;
  if (signing.mode === 'standard-webhooks') {
    // The timestamp is the caller's clock: a request without one would carry a wrong one.
    if (message === undefined) throw new TypeError('standard-webhooks headers need the message');
    return standardHeaders(headers, body, signing, message);
  }
  const { current, previous } = signing;
  if (current === undefined) return headers;
  if (previous === undefined) {
    headers[SIGNATURE_HEADER] = current.hex.hex(body);
  } else {
    headers[SIGNATURE_HEADER] = previous.hex.hex(body);
    headers[NEXT_SIGNATURE_HEADER] = current.hex.hex(body);
  }
  return headers;
}

/** `webhook-id`, `webhook-timestamp` and, with a secret, `webhook-signature` (new one first). */
function standardHeaders(
  headers: Record<string, string>,
  body: Buffer,
  { current, previous }: Signing,
  message: MessageFacts,
): Record<string, string> {
  const id = webhookId(message.messageId, body);
  const timestamp = Math.floor(message.nowMs / 1000);
  headers[WEBHOOK_ID_HEADER] = id;
  headers[WEBHOOK_TIMESTAMP_HEADER] = String(timestamp);
  if (current === undefined) return headers;
  const signers = previous === undefined ? [current] : [current, previous];
  headers[WEBHOOK_SIGNATURE_HEADER] = signers
    .map((signer) => {
      if (signer.standard === undefined) throw new UnsignableError();
      return signer.standard.sign(id, timestamp, body);
    })
    .join(' ');
  return headers;
}

/** One webhook's request headers: its sendable static headers, then Sluice's own. */
export function webhookHeaders(
  staticHeaders: Readonly<Record<string, string>>,
  sluice: Readonly<Record<string, string>>,
): Record<string, string> {
  return { ...staticHeaders, ...sluice };
}

/** Header values a person may read in the ledger: Sluice's own, none of them secret. */
const SHOWN_HEADERS: ReadonlySet<string> = new Set(['user-agent', 'content-type']);

/** What a masked header value reads as. */
export const MASKED_VALUE = '********';

/**
 * A request's headers as the ledger keeps them: every name, but only the values of
 * `SHOWN_HEADERS`; static header values (often credentials) and signatures are masked.
 */
export function maskedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    masked[name] = SHOWN_HEADERS.has(name.toLowerCase()) ? headers[name] : MASKED_VALUE;
  }
  return masked;
}

/** Splits static headers into those that can be sent and the names of those that cannot. */
export function sendableHeaders(headers: Readonly<Record<string, string>>): {
  kept: Readonly<Record<string, string>>;
  dropped: string[];
} {
  const names = Object.keys(headers);
  const dropped = names.filter((name) => refusedWebhookHeader(name) !== undefined);
  if (dropped.length === 0) return { kept: headers, dropped };
  const kept: Record<string, string> = {};
  for (const name of names) if (!dropped.includes(name)) kept[name] = headers[name];
  return { kept: Object.freeze(kept), dropped };
}

/** Most webhooks whose dropped headers were logged (a settings reload makes new objects). */
const MAX_WARNED = 10_000;

/**
 * A webhook's static headers as they can be sent, their values opened (the admin app stores
 * them sealed, like the shared secret). The admin API refuses the headers Sluice sets itself
 * and connection-level ones (`Connection`, `Transfer-Encoding`, `Proxy-*`...), which the HTTP
 * client would refuse on every request; a row saved before that rule still has them, and they
 * are dropped here (with one warning per webhook) so that the rest of the delivery goes out.
 * Worked out once per settings snapshot: the snapshot's header objects are the keys.
 */
export class StaticHeaders {
  private readonly sendable = new WeakMap<object, Readonly<Record<string, string>>>();
  private readonly warned = new Set<string>();

  /**
   * @param warn logs a message (names headers, never values)
   * @param open opens a sealed value; throws (a `SecretBoxError`) when it cannot
   */
  constructor(
    private readonly warn: (message: string) => void,
    private readonly open: (sealed: string) => string,
  ) {}

  /**
   * The headers of `webhook` that can be sent, with their values opened.
   * @throws what `open` throws when a value does not open (sealed under another key)
   */
  of(webhook: WebhookSettings): Readonly<Record<string, string>> {
    let headers = this.sendable.get(webhook.headers);
    if (headers === undefined) {
      const { kept, dropped } = sendableHeaders(webhook.headers);
      headers = Object.freeze(
        Object.fromEntries(Object.entries(kept).map(([name, v]) => [name, this.open(v)])),
      );
      this.sendable.set(webhook.headers, headers);
      if (dropped.length > 0) this.warnOnce(webhook.id, dropped);
    }
    return headers;
  }

  private warnOnce(webhookId: string, dropped: readonly string[]): void {
    const key = `${webhookId} ${dropped.join(',')}`;
    if (this.warned.has(key)) return;
    if (this.warned.size >= MAX_WARNED) this.warned.clear();
    this.warned.add(key);
    this.warn(
      `webhook ${webhookId}: static header(s) ${dropped.join(', ')} not sent ` +
        '(set by Sluice or connection-level); remove them through the admin API',
    );
  }
}
