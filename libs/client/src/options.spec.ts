import { AnalyticsError } from './errors';
import { batchUrl, debugNamesAnalytics, resolveOptions } from './options';

describe(batchUrl.name, () => {
  it.each([
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/v1/batch'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/v1/batch'],
    ['https://events.example.com/sluice', 'https://events.example.com/sluice/v1/batch'],
    ['https://events.example.com/sluice/', 'https://events.example.com/sluice/v1/batch'],
    ['http://h/v1/batch', 'http://h/v1/batch'],
    ['http://h/v1/batch/', 'http://h/v1/batch'],
    ['http://h/v1/import', 'http://h/v1/import'],
    ['http://h/api/v1/import?x=1', 'http://h/api/v1/import?x=1'],
    ['http://h/v1', 'http://h/v1/v1/batch'],
  ])('sends to %s as %s', (endpoint, url) => {
    expect(batchUrl(endpoint)).toBe(url);
  });

  it.each(['127.0.0.1:8080', 'ftp://h'])('refuses %j', (endpoint) => {
    expect(() => batchUrl(endpoint)).toThrow(AnalyticsError);
  });

  it.each([undefined, ''])('requires an endpoint, with no default (%j)', (endpoint) => {
    expect(() => batchUrl(endpoint as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_options',
        message: expect.stringMatching(/^endpoint is required/),
      }),
    );
  });
});

describe(debugNamesAnalytics.name, () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['analytics', true],
    ['express,analytics', true],
    ['express analytics', true],
    ['*', true],
    ['analytic*', true],
    ['analytics:*', false],
    ['analyticsx', false],
    ['*,-analytics', false],
    ['express', false],
  ])('reads DEBUG=%j as %j', (value, on) => {
    expect(debugNamesAnalytics(value)).toBe(on);
  });
});

describe(resolveOptions.name, () => {
  const valid = { writeKey: 'wk', endpoint: 'http://127.0.0.1:8080' };

  it('applies the defaults', () => {
    const settings = resolveOptions({ writeKey: 'wk', endpoint: 'http://127.0.0.1:8080' });
    expect(settings).toMatchObject({
      url: 'http://127.0.0.1:8080/v1/batch',
      authorization: `Basic ${Buffer.from('wk:').toString('base64')}`,
      flushAt: 20,
      flushAfterMs: 5_000,
      maxQueuedCalls: 10_000,
      maxRetries: 3,
      debug: false,
    });
  });

  it('turns debug logging on from DEBUG unless told otherwise', () => {
    const endpoint = 'http://127.0.0.1:8080';
    expect(resolveOptions({ writeKey: 'wk', endpoint }, 'analytics').debug).toBe(true);
    expect(resolveOptions({ writeKey: 'wk', endpoint, debug: false }, 'analytics').debug).toBe(
      false,
    );
  });

  it.each<[Record<string, unknown>, string]>([
    [{}, 'writeKey must be a non-empty string'],
    [{ writeKey: '' }, 'writeKey must be a non-empty string'],
    [{ writeKey: 'wk' }, 'endpoint is required'],
    [{ writeKey: 'wk', endpoint: '' }, 'endpoint is required'],
    [{ ...valid, flushAt: 0 }, 'flushAt must be a whole number >= 1'],
    [{ ...valid, flushAt: 1.5 }, 'flushAt must be a whole number >= 1'],
    [{ ...valid, flushAfterMs: '5' }, 'flushAfterMs must be a whole number >= 1'],
    [{ ...valid, maxRetries: -1 }, 'maxRetries must be a whole number >= 0'],
    [{ ...valid, flushAt: 11, maxQueuedCalls: 10 }, 'flushAt must be at most maxQueuedCalls'],
  ])('refuses %j', (options, message) => {
    expect(() => resolveOptions(options as never)).toThrow(message);
  });
});
