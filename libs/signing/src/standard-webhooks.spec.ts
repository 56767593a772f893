import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { StandardWebhooksSigner, whsecKey } from './standard-webhooks';

interface Vector {
  name: string;
  secret: string;
  id: string;
  timestamp: number;
  body: string;
  signature: string;
}

/** Vectors computed outside this code (see the file's comment). */
const VECTORS = (
  JSON.parse(readFileSync(join(__dirname, '..', 'standard-webhooks-vectors.json'), 'utf8')) as {
    vectors: Vector[];
  }
).vectors;

describe(StandardWebhooksSigner.name, () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))('matches vector %s', (_name, v) => {
    const signer = new StandardWebhooksSigner(whsecKey(v.secret)!);
    expect(signer.sign(v.id, v.timestamp, Buffer.from(v.body, 'utf8'))).toBe(v.signature);
  });

  it('signs the id and the timestamp too: changing either changes the signature', () => {
    const v = VECTORS[1];
    const signer = new StandardWebhooksSigner(whsecKey(v.secret)!);
    const body = Buffer.from(v.body, 'utf8');
    expect(signer.sign(`${v.id}x`, v.timestamp, body)).not.toBe(v.signature);
    expect(signer.sign(v.id, v.timestamp + 1, body)).not.toBe(v.signature);
  });
});

describe(whsecKey.name, () => {
  it.each([
    ['the spec example (24 bytes)', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 24],
    ['64 bytes', `whsec_${Buffer.alloc(64, 1).toString('base64')}`, 64],
  ])('decodes %s', (_name, secret, bytes) => {
    expect(whsecKey(secret)?.length).toBe(bytes);
  });

  it.each([
    ['no prefix', Buffer.alloc(32).toString('base64')],
    ['a prefix only', 'whsec_'],
    ['not base64', 'whsec_not base64 at all, no!!'],
    ['base64url', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`],
    ['23 bytes', `whsec_${Buffer.alloc(23, 1).toString('base64')}`],
    ['65 bytes', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
    ['a plain shared secret', 's3cr3t-shared'],
  ])('refuses %s', (_name, secret) => {
    expect(whsecKey(secret)).toBeUndefined();
  });
});
