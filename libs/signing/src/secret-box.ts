import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** First byte of every ciphertext: the format, so the cipher can change later. */
const FORMAT_AES_256_GCM = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A ciphertext that does not open with the key (wrong key, or altered bytes). */
export class SecretBoxError extends Error {
  readonly code = 'SECRET_UNREADABLE';

  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * Authenticated encryption of secrets at rest (shared secrets, static header values): AES-256-GCM with a random 96-bit IV
 * per secret. Ciphertext layout: format byte, IV, tag, encrypted UTF-8 bytes. The key never
 * appears in errors.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** @param keyBase64 32 random bytes, base64 (e.g. `openssl rand -base64 32`) */
  constructor(keyBase64: string) {
    const key = Buffer.from(keyBase64, 'base64');
    if (key.length !== KEY_BYTES)
      throw new RangeError('the encryption key must be 32 bytes, base64');
    this.key = key;
  }

  seal(plaintext: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(FORMAT_AES_256_GCM), iv, cipher.getAuthTag(), encrypted]);
  }

  /** {@link seal} as base64 text, for secrets kept in text or JSON columns. */
  sealText(plaintext: string): string {
    return this.seal(plaintext).toString('base64');
  }

  /** Opens what {@link sealText} made; throws {@link SecretBoxError} like {@link open}. */
  openText(sealed: string): string {
    return this.open(Buffer.from(sealed, 'base64'));
  }

  open(ciphertext: Uint8Array): string {
    const bytes = Buffer.from(ciphertext);
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== FORMAT_AES_256_GCM) {
      throw new SecretBoxError('not a sealed secret');
    }
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const tag = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(tag);
    try {
      const body = bytes.subarray(1 + IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the secret does not open with this key');
    }
  }
}
