import { backoffMs, classifyResponse, parseRetryAfter } from './retry-policy';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe(classifyResponse.name, () => {
  it.each([200, 202, 204])('takes %i as accepted', (status) => {
    expect(classifyResponse({ status, body: '{}' }, NOW)).toEqual({ kind: 'ok', body: '{}' });
  });

  it.each([500, 502, 503, 504, 408, 429])('retries %i', (status) => {
    expect(classifyResponse({ status, body: '' }, NOW)).toMatchObject({ kind: 'retry', status });
  });

  it.each([301, 400, 401, 403, 404, 413, 415])('gives up on %i', (status) => {
    expect(classifyResponse({ status, body: '' }, NOW)).toMatchObject({ kind: 'dead', status });
  });

  it('quotes the tracking API’s error code and message', () => {
    const body = JSON.stringify({ code: 'unauthorized', message: 'unknown write key' });
    expect(classifyResponse({ status: 401, body }, NOW)).toEqual({
      kind: 'dead',
      status: 401,
      serverCode: 'unauthorized',
      reason: 'the server answered 401 unauthorized: unknown write key',
    });
  });

  it('passes Retry-After on', () => {
    expect(classifyResponse({ status: 429, body: '', retryAfter: '3' }, NOW)).toMatchObject({
      retryAfterMs: 3_000,
    });
  });
});

describe(parseRetryAfter.name, () => {
  it.each<[string | undefined, number | undefined]>([
    [undefined, undefined],
    ['', undefined],
    ['0', 0],
    ['12', 12_000],
    [' 2 ', 2_000],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5_000],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 0],
    ['soon', undefined],
  ])('reads %j as %j ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });
});

describe(backoffMs.name, () => {
  it('doubles from the minimum, jittering the upper half', () => {
    expect([1, 2, 3, 4].map((retry) => backoffMs(retry, 100, 10_000, () => 0))).toEqual([
      50, 100, 200, 400,
    ]);
    expect([1, 2, 3, 4].map((retry) => backoffMs(retry, 100, 10_000, () => 0.999_999))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('never waits longer than the maximum', () => {
    expect(backoffMs(30, 100, 1_000, () => 0.999_999)).toBe(1_000);
  });
});
