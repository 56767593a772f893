import { ValidateBy, ValidationOptions } from 'class-validator';

import { MAX_HEADERS_PER_WEBHOOK } from '@app/contracts';

/** An HTTP header name: an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers Sluice sets itself on every webhook POST; a static header cannot replace them. */
export const RESERVED_HEADERS = [
  'content-type',
  'user-agent',
  'x-signature',
  'host',
  'content-length',
];

/** What is wrong with a webhook's static headers, or undefined when nothing is. */
export function headersProblem(headers: unknown): string | undefined {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    return 'headers must be an object of header names to values';
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS_PER_WEBHOOK) {
    return `headers may have at most ${MAX_HEADERS_PER_WEBHOOK} entries`;
  }
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name))
      return `header name ${JSON.stringify(name.slice(0, 64))} is not a valid token`;
    if (RESERVED_HEADERS.includes(name.toLowerCase())) return `header ${name} cannot be set`;
    if (typeof value !== 'string') return `header ${name} must have a string value`;
    if (/[\r\n\0]/.test(value)) return `header ${name} must not contain CR, LF or NUL`;
  }
  return undefined;
}

/** class-validator rule for {@link headersProblem}. */
export function IsWebhookHeaders(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isWebhookHeaders',
      validator: {
        validate: (value: unknown) => headersProblem(value) === undefined,
        defaultMessage: (args) => headersProblem(args?.value) ?? 'headers are not valid',
      },
    },
    options,
  );
}
