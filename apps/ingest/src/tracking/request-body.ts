import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';

import { IngestError } from './ingest.error';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * The request body as plain bytes: inflated when `Content-Encoding` is gzip or deflate, with
 * the inflation itself stopped once it passes `maxBytes` (a small gzip bomb cannot allocate
 * more). Throws `request_too_large` past `maxBytes`, `unsupported_encoding` for other codings.
 */
export async function decodeBody(
  raw: Buffer | undefined,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const body = raw ?? Buffer.alloc(0);
  const coding = (contentEncoding ?? 'identity').trim().toLowerCase();
  let plain: Buffer;
  if (coding === 'identity' || coding === '') plain = body;
  else if (coding === 'gzip' || coding === 'x-gzip')
    plain = await inflateBounded(gunzipAsync, body, maxBytes);
  else if (coding === 'deflate') plain = await inflateBounded(inflateAsync, body, maxBytes);
  else
    throw new IngestError(
      'unsupported_encoding',
      `Content-Encoding ${coding.slice(0, 32)} is not supported; use gzip`,
    );
  if (plain.length > maxBytes) throw tooLarge(maxBytes);
  return plain;
}

async function inflateBounded(
  inflater: (buffer: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>,
  body: Buffer,
  maxBytes: number,
): Promise<Buffer> {
  try {
    return await inflater(body, { maxOutputLength: maxBytes + 1 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes);
    throw new IngestError('invalid_body', 'the compressed body could not be inflated');
  }
}

function tooLarge(maxBytes: number): IngestError {
  return new IngestError('request_too_large', `the request body exceeds ${maxBytes} bytes`);
}

/** Parses JSON bytes into an object; anything else is `invalid_json`. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new IngestError('invalid_json', 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new IngestError('invalid_json', 'the body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * Refuses a body whose `Content-Type` says it is something other than JSON: `application/json`,
 * `text/plain` (the browser libraries' choice: it needs no preflight of its own) and no type
 * at all are read as JSON, whatever their parameters; a form, XML or any other type is
 * `unsupported_media_type` (415).
 */
export function checkMediaType(contentType: string | undefined): void {
  if (contentType === undefined || contentType === 'application/json') return;
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  if (type === '' || type === 'application/json' || type === 'text/plain') return;
  throw new IngestError(
    'unsupported_media_type',
    `Content-Type ${type.slice(0, 64)} is not accepted: send JSON as application/json or text/plain`,
  );
}
