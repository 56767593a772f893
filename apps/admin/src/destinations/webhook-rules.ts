import { isURL, ValidateBy, ValidationOptions } from 'class-validator';

import { MAX_HEADERS_PER_WEBHOOK, refusedWebhookHeader } from '@app/contracts';

/** An HTTP header name: an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * What a webhook URL must look like. Host names may hold `_` (Docker Compose service names)
 * and need no top-level domain (`http://receiver:8080/`).
 */
const URL_RULES = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_tld: false,
  allow_underscores: true,
};

/** What replaces a stored URL's user and password wherever the API shows it. */
const HIDDEN_CREDENTIALS = '***';

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
    const refused = refusedWebhookHeader(name);
    if (refused === 'reserved') return `header ${name} cannot be set: Sluice sets it`;
    if (refused === 'connection') {
      return `header ${name} cannot be set: it belongs to the HTTP connection, not the request`;
    }
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

/**
 * What is wrong with a webhook URL, or undefined when nothing is. The message never repeats
 * the URL: it may carry a password.
 */
export function webhookUrlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string' || !isURL(url, URL_RULES)) {
    return 'url must be an absolute http or https URL';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return 'url must not carry a user or password (user:password@host); send them in a static Authorization header instead';
  }
  return undefined;
}

/** class-validator rule for {@link webhookUrlProblem}. */
export function IsWebhookUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isWebhookUrl',
      validator: {
        validate: (value: unknown) => webhookUrlProblem(value) === undefined,
        defaultMessage: (args) => webhookUrlProblem(args?.value) ?? 'url is not valid',
      },
    },
    options,
  );
}

/**
 * A stored URL as the API shows it: a user and password (saved before such URLs were
 * refused) are replaced by `***`, so that they never leave the database.
 */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = HIDDEN_CREDENTIALS;
  parsed.password = '';
  return parsed.href;
}
