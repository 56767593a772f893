import { createHash, createHmac, hash } from 'node:crypto';

/** SHA-1's block size in bytes: the HMAC key is padded (or hashed) to it. */
const SHA1_BLOCK_BYTES = 64;
const SHA1_DIGEST_BYTES = 20;
/** A body up to this size is signed without allocating. */
const SCRATCH_BYTES = 16 * 1024;

/**
 * HMAC-SHA1 (RFC 2104) with one key, for signing many bodies: the padded inner and outer keys
 * are made once, and each signature is two one-shot hashes. `createHmac` sets a key up again
 * for every signature, which cost the dispatcher more than the hashing itself.
 */
export class HmacSha1 {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  /** @param secret the shared secret; its UTF-8 bytes are the key */
  constructor(secret: string) {
    let key = Buffer.from(secret, 'utf8');
    if (key.length > SHA1_BLOCK_BYTES) key = hash('sha1', key, 'buffer');
    this.inner = Buffer.alloc(SHA1_BLOCK_BYTES + SCRATCH_BYTES);
    this.outer = Buffer.alloc(SHA1_BLOCK_BYTES + SHA1_DIGEST_BYTES);
    for (let i = 0; i < SHA1_BLOCK_BYTES; i += 1) {
      const byte = i < key.length ? key[i] : 0;
      this.inner[i] = byte ^ 0x36;
      this.outer[i] = byte ^ 0x5c;
    }
  }

  /** Lowercase hex signature of the exact bytes of `body`. */
  hex(body: Uint8Array): string {
    let innerDigest: Buffer;
    if (body.length <= SCRATCH_BYTES) {
      this.inner.set(body, SHA1_BLOCK_BYTES);
      const message = this.inner.subarray(0, SHA1_BLOCK_BYTES + body.length);
      innerDigest = hash('sha1', message, 'buffer');
    } else {
      // A larger body (a batch's) is hashed where it is, not copied behind the key.
      const pad = this.inner.subarray(0, SHA1_BLOCK_BYTES);
      innerDigest = createHash('sha1').update(pad).update(body).digest();
    }
    this.outer.set(innerDigest, SHA1_BLOCK_BYTES);
    return hash('sha1', this.outer, 'hex');
  }
}

/**
 * Lowercase hex HMAC-SHA1 of `body`, keyed by the UTF-8 bytes of `secret`.
 * The bytes signed must be exactly the bytes sent: pass the body as a Buffer, never re-serialize.
 */
export function hmacSha1Hex(secret: string | Buffer, body: Uint8Array | string): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}
