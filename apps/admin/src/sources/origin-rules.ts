import { ValidateBy, ValidationOptions } from 'class-validator';

/** The longest origin accepted (scheme, a host name of at most 253 characters, a port). */
const MAX_ORIGIN_CHARS = 270;

/** A DNS name or IPv4 address, or an IPv6 address in brackets: no wildcard can match. */
const HOST = /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/;

/**
 * Whether `value` is a web origin written as browsers send it in `Origin`: `http` or `https`,
 * the host in lower case, the port only when it is not the scheme's default, and nothing
 * else (no path, not even `/`; no wildcard). Ingest compares origins as exact strings, so any other
 * spelling could never match.
 */
export function isSerializedOrigin(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > MAX_ORIGIN_CHARS) return false;
  try {
    const url = new URL(value);
    const scheme = url.protocol === 'http:' || url.protocol === 'https:';
    return scheme && url.origin === value && HOST.test(url.hostname);
  } catch {
    return false;
  }
}

/** class-validator rule for {@link isSerializedOrigin}. */
export function IsSerializedOrigin(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSerializedOrigin',
      validator: {
        validate: isSerializedOrigin,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must hold origins as browsers send them: ` +
          'http or https, lower-case host, port only when not the default, no path ' +
          '(e.g. https://shop.example.com)',
      },
    },
    options,
  );
}
