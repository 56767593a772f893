import { writeKeyFromBasic } from './write-key';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe(writeKeyFromBasic.name, () => {
  it('takes the user name of Basic auth, with or without the colon', () => {
    expect(writeKeyFromBasic(basic('key123:'))).toBe('key123');
    expect(writeKeyFromBasic(basic('key123'))).toBe('key123');
    expect(writeKeyFromBasic(basic('key123:ignored'))).toBe('key123');
  });

  it('returns undefined for other schemes and empty users', () => {
    expect(writeKeyFromBasic('Bearer abc')).toBeUndefined();
    expect(writeKeyFromBasic(basic(':'))).toBeUndefined();
    expect(writeKeyFromBasic('Basic !!!')).toBeUndefined();
  });
});
