import { createHmac } from 'node:crypto';

/** The prefix of a Standard Webhooks secret: `whsec_` then the key, base64. */
export const WHSEC_PREFIX = 'whsec_';

/** The spec's bounds on a key's length, in bytes. */
export const MIN_WHSEC_KEY_BYTES = 24;
export const MAX_WHSEC_KEY_BYTES = 64;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of a Standard Webhooks secret (`whsec_` + standard base64 of 24 to 64 bytes),
 * or undefined when `secret` is not one. The official libraries strip the prefix and decode
 * the rest the same way.
 */
export function whsecKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_WHSEC_KEY_BYTES || key.length > MAX_WHSEC_KEY_BYTES) return undefined;
  return key;
}

/**
 * Signs Standard Webhooks messages with one key: `v1,` + base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`, the exact body bytes.
 */
export class StandardWebhooksSigner {
  /** @param key the decoded key of a `whsec_` secret ({@link whsecKey}) */
  constructor(private readonly key: Buffer) {}

  /** One `webhook-signature` entry for this id, timestamp (epoch seconds) and body. */
  sign(id: string, timestampSeconds: number, body: Uint8Array): string {
    const mac = createHmac('sha256', this.key);
    mac.update(`${id}.${timestampSeconds}.`, 'utf8');
    mac.update(body);
    return `v1,${mac.digest('base64')}`;
  }
}
