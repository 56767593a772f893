import { isSerializedOrigin } from './origin-rules';

describe(isSerializedOrigin.name, () => {
  it.each([
    'https://shop.example.com',
    'http://127.0.0.1:3000',
    'https://example.com:8443',
    'http://[::1]:8080',
    'https://xn--bcher-kva.example',
  ])('accepts %s', (origin) => {
    expect(isSerializedOrigin(origin)).toBe(true);
  });

  it.each([
    ['a trailing slash', 'https://shop.example.com/'],
    ['a path', 'https://shop.example.com/app'],
    ['upper case', 'https://Shop.example.com'],
    ['the default port', 'https://shop.example.com:443'],
    ['another scheme', 'ftp://shop.example.com'],
    ['no scheme', 'shop.example.com'],
    ['a wildcard', 'https://*.example.com'],
    ['user info', 'https://u@shop.example.com'],
    ['the opaque origin', 'null'],
    ['not a string', 42],
  ])('refuses %s', (_what, origin) => {
    expect(isSerializedOrigin(origin)).toBe(false);
  });
});
