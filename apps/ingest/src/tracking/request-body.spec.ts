import { deflateSync, gzipSync } from 'node:zlib';

import { checkMediaType, decodeBody, parseJsonObject } from './request-body';

const LIMIT = 1_000;

describe(decodeBody.name, () => {
  it('passes plain bytes through', async () => {
    await expect(decodeBody(Buffer.from('{}'), undefined, LIMIT)).resolves.toEqual(
      Buffer.from('{}'),
    );
    await expect(decodeBody(undefined, undefined, LIMIT)).resolves.toEqual(Buffer.alloc(0));
  });

  it('inflates gzip and deflate', async () => {
    const json = Buffer.from('{"a":1}');
    await expect(decodeBody(gzipSync(json), 'gzip', LIMIT)).resolves.toEqual(json);
    await expect(decodeBody(deflateSync(json), 'Deflate', LIMIT)).resolves.toEqual(json);
  });

  it('stops inflating past the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(1_000_000));
    expect(bomb.length).toBeLessThan(LIMIT * 2);
    await expect(decodeBody(bomb, 'gzip', LIMIT)).rejects.toMatchObject({
      code: 'request_too_large',
      status: 400,
    });
  });

  it('refuses plain bytes past the limit, broken gzip and unknown codings', async () => {
    await expect(decodeBody(Buffer.alloc(LIMIT + 1), undefined, LIMIT)).rejects.toMatchObject({
      code: 'request_too_large',
    });
    await expect(decodeBody(Buffer.from('nope'), 'gzip', LIMIT)).rejects.toMatchObject({
      code: 'invalid_body',
    });
    await expect(decodeBody(Buffer.from('{}'), 'br', LIMIT)).rejects.toMatchObject({
      code: 'unsupported_encoding',
      status: 415,
    });
  });
});

describe(parseJsonObject.name, () => {
  it('parses an object and refuses anything else', () => {
    expect(parseJsonObject(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    for (const text of ['', '[1]', 'null', '"x"', '{"a":']) {
      expect(thrownCode(() => parseJsonObject(Buffer.from(text)))).toBe('invalid_json');
    }
  });
});

/** The `code` of what `fn` throws. */
function thrownCode(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return undefined;
}

describe(checkMediaType.name, () => {
  it.each([
    undefined,
    '',
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'text/plain',
    'text/plain;charset=UTF-8',
  ])('reads %p as JSON', (type) => {
    expect(() => checkMediaType(type)).not.toThrow();
  });

  it.each([
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'text/xml',
    'text/html',
  ])('refuses %s with 415', (type) => {
    expect(() => checkMediaType(type)).toThrow(
      expect.objectContaining({ code: 'unsupported_media_type', status: 415 }),
    );
  });
});
