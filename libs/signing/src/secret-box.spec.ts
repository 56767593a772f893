import { randomBytes } from 'node:crypto';

import { SecretBox, SecretBoxError } from './secret-box';

const KEY = randomBytes(32).toString('base64');

describe(SecretBox.name, () => {
  it('opens what it sealed, and never stores the plaintext', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('s3cr3t-ünïcode');
    expect(sealed.toString('latin1')).not.toContain('s3cr3t');
    expect(box.open(sealed)).toBe('s3cr3t-ünïcode');
  });

  it('uses a fresh IV each time', () => {
    const box = new SecretBox(KEY);
    expect(box.seal('same').equals(box.seal('same'))).toBe(false);
  });

  it('refuses altered bytes and another key', () => {
    const sealed = new SecretBox(KEY).seal('secret');
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] ^= 1;
    expect(() => new SecretBox(KEY).open(altered)).toThrow(SecretBoxError);
    expect(() => new SecretBox(randomBytes(32).toString('base64')).open(sealed)).toThrow(
      SecretBoxError,
    );
    expect(() => new SecretBox(KEY).open(Buffer.from('short'))).toThrow(SecretBoxError);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16).toString('base64'))).toThrow(RangeError);
  });

  it('seals to base64 text and opens it, refusing text that is not a sealed secret', () => {
    const box = new SecretBox(KEY);
    const sealed = box.sealText('Bearer abc');
    expect(sealed).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('abc');
    expect(box.openText(sealed)).toBe('Bearer abc');
    expect(() => box.openText('Bearer abc')).toThrow(SecretBoxError);
  });
});
