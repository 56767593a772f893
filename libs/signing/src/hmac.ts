import { createHmac, createSecretKey, KeyObject } from 'node:crypto';

/**
 * An HMAC key made once from a shared secret's UTF-8 bytes, for signing many bodies: a key
 * given as a string or Buffer is converted again on every signature.
 */
export function hmacKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/**
 * Lowercase hex HMAC-SHA1 of `body`, keyed by the UTF-8 bytes of `secret` (or a key made by
 * {@link hmacKey}). The bytes signed must be exactly the bytes sent: pass the body as a
 * Buffer, never re-serialize.
 */
export function hmacSha1Hex(
  secret: string | Buffer | KeyObject,
  body: Uint8Array | string,
): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}
