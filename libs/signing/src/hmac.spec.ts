import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { hmacKey, hmacSha1Hex } from './hmac';

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

describe(hmacKey.name, () => {
  it('signs as the secret itself does', () => {
    for (const vector of VECTORS) {
      const body = Buffer.from(vector.body, 'utf8');
      expect(hmacSha1Hex(hmacKey(vector.secret), body)).toBe(vector.hmacSha1Hex);
    }
  });
});
