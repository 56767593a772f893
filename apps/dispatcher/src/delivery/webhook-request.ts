import { refusedWebhookHeader } from '@app/contracts';
import { WebhookSettings } from '@app/settings';

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

/** Carries the lowercase hex HMAC-SHA1 of the body, when the destination has a shared secret. */
export const SIGNATURE_HEADER = 'x-signature';

/**
 * The reserved headers the HTTP client writes itself: `Host` from the URL and
 * `Content-Length` from the body (its connection-level `Connection` is refused as such).
 */
export const CLIENT_SET_HEADERS: readonly string[] = ['host', 'content-length'];

/** Signs body bytes: the destination's opened shared secret. */
export interface BodySigner {
  hex(body: Buffer): string;
}

/**
 * The headers Sluice sets on one delivery's requests (lower case), the same for every webhook
 * of the destination: `User-Agent`, `Content-Type` and, with a signer, the signature of the
 * exact bytes.
 */
export function sluiceHeaders(body: Buffer, signer?: BodySigner): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': USER_AGENT,
    'content-type': CONTENT_TYPE,
  };
  if (signer !== undefined) headers[SIGNATURE_HEADER] = signer.hex(body);
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
 * A webhook's static headers as they can be sent. The admin API refuses the headers Sluice sets
 * itself and connection-level ones (`Connection`, `Transfer-Encoding`, `Proxy-*`...), which the
 * HTTP client would refuse on every request; a row saved before that rule still has them, and
 * they are dropped here (with one warning per webhook) so that the rest of the delivery goes
 * out. Worked out once per settings snapshot: the snapshot's header objects are the keys.
 */
export class StaticHeaders {
  private readonly sendable = new WeakMap<object, Readonly<Record<string, string>>>();
  private readonly warned = new Set<string>();

  constructor(private readonly warn: (message: string) => void) {}

  /** The headers of `webhook` that can be sent (its own object when nothing is dropped). */
  of(webhook: WebhookSettings): Readonly<Record<string, string>> {
    let headers = this.sendable.get(webhook.headers);
    if (headers === undefined) {
      const { kept, dropped } = sendableHeaders(webhook.headers);
      headers = kept;
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
