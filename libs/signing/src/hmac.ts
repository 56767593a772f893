import { createHmac } from 'node:crypto';

/**
 * Lowercase hex HMAC-SHA1 of `body`, keyed by the UTF-8 bytes of `secret`.
 * The bytes signed must be exactly the bytes sent: pass the body as a Buffer, never re-serialize.
 */
export function hmacSha1Hex(secret: string | Buffer, body: Uint8Array | string): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}
