import { etagMatches, publicAddress, settingsDocument } from './settings-document';

describe(publicAddress.name, () => {
  it.each([
    ['http://127.0.0.1:8080', { apiHost: '127.0.0.1:8080/v1', protocol: 'http' }],
    ['https://ingest.example.com', { apiHost: 'ingest.example.com/v1', protocol: 'https' }],
    ['https://example.com:443/sluice', { apiHost: 'example.com/sluice/v1', protocol: 'https' }],
    ['https://Example.com/a/b/', { apiHost: 'example.com/a/b/v1', protocol: 'https' }],
  ])('%s', (url, expected) => {
    expect(publicAddress(url)).toEqual(expected);
  });
});

describe(settingsDocument.name, () => {
  const address = { apiHost: 'ingest.example.com/v1', protocol: 'https' } as const;

  it('points the Segment.io integration at this ingest, with the write key, and nothing else', () => {
    const document = JSON.parse(settingsDocument('key-1', address).body) as Record<string, any>;
    expect(document.integrations).toEqual({
      'Segment.io': { apiKey: 'key-1', apiHost: 'ingest.example.com/v1', protocol: 'https' },
    });
    expect(document.plan).toEqual({});
    expect(document.remotePlugins).toEqual([]);
    expect(document.enabledMiddleware).toEqual({});
    expect(document.legacyVideoPluginsEnabled).toBe(false);
    // analytics-next reports its own metrics unless told a sample rate of 0.
    expect(document.metrics).toEqual({ sampleRate: 0, host: 'ingest.example.com/v1' });
  });

  it('tags the same bytes with the same ETag, other bytes with another', () => {
    const one = settingsDocument('key-1', address);
    expect(settingsDocument('key-1', address)).toEqual(one);
    expect(settingsDocument('key-2', address).etag).not.toBe(one.etag);
    expect(one.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });
});

describe(etagMatches.name, () => {
  it.each([
    [undefined, false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
  ])('If-None-Match %p', (header, expected) => {
    expect(etagMatches(header, '"abc"')).toBe(expected);
  });
});
