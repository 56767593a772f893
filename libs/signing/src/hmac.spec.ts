import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { HmacSha1, hmacSha1Hex } from './hmac';

interface Vector {
  name: string;
  secret: string;
  body: string;
  hmacSha1Hex: string;
}

/** Vectors computed outside this code (see the file's comment). */
const VECTORS = (
  JSON.parse(readFileSync(join(__dirname, '..', 'test-vectors.json'), 'utf8')) as {
    vectors: Vector[];
  }
).vectors;

describe(hmacSha1Hex.name, () => {
  it('matches RFC 2202 test case 2', () => {
    expect(hmacSha1Hex('Jefe', Buffer.from('what do ya want for nothing?'))).toBe(
      'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79',
    );
  });

  it.each(VECTORS.map((v) => [v.name, v] as const))('matches vector %s', (_name, vector) => {
    expect(hmacSha1Hex(vector.secret, Buffer.from(vector.body, 'utf8'))).toBe(vector.hmacSha1Hex);
  });

  it('signs bytes, so one changed byte changes the signature', () => {
    const body = Buffer.from(VECTORS[1].body, 'utf8');
    const changed = Buffer.from(body);
    changed[changed.length - 2] ^= 1;
    expect(hmacSha1Hex(VECTORS[1].secret, changed)).not.toBe(VECTORS[1].hmacSha1Hex);
  });
});

describe(HmacSha1.name, () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))('matches vector %s', (_name, vector) => {
    const signer = new HmacSha1(vector.secret);
    expect(signer.hex(Buffer.from(vector.body, 'utf8'))).toBe(vector.hmacSha1Hex);
  });

  it('matches RFC 2202 test case 6 (a key longer than a block, hashed first)', () => {
    const signer = new HmacSha1('\xaa'.repeat(80));
    const body = Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First');
    // The RFC's key is 80 bytes of 0xaa; as a string each is one UTF-8 code point of 2 bytes.
    expect(signer.hex(body)).toBe(hmacSha1Hex(Buffer.from('\xaa'.repeat(80), 'utf8'), body));
  });

  it('signs many bodies of different sizes with one key, also past its scratch space', () => {
    const signer = new HmacSha1(VECTORS[1].secret);
    for (const size of [0, 1, 700, 16 * 1024, 16 * 1024 + 1, 100_000, 3]) {
      const body = Buffer.alloc(size, size % 251);
      expect(signer.hex(body)).toBe(hmacSha1Hex(VECTORS[1].secret, body));
    }
  });
});
