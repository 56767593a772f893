import { buildSnapshot, EMPTY_SNAPSHOT, type SettingsRows } from './settings.snapshot';

const WRITE_KEY = 'wk_0123456789abcdef0123456789abcdef';

function rows(): SettingsRows {
  return {
    sources: [{ id: 's1', name: 'Shop', writeKey: WRITE_KEY, enabled: true, allowedOrigins: [] }],
    destinations: [
      {
        id: 'd1',
        sourceId: 's1',
        kind: 'webhooks',
        name: 'Hooks',
        enabled: true,
        sharedSecretCiphertext: Buffer.from([1, 2, 3]),
        filter: null,
        rateLimitPerSecond: null,
        batchMaxCalls: null,
        batchMaxBytes: null,
        batchMaxWaitMs: null,
        sendTraceparent: false,
        createdAt: new Date(1_000),
      },
    ],
    webhooks: [
      { id: 'w2', destinationId: 'd1', position: 2, url: 'https://b.test/', headers: {} },
      { id: 'w0', destinationId: 'd1', position: 0, url: 'https://a.test/', headers: { A: '1' } },
    ],
  };
}

describe(buildSnapshot.name, () => {
  it('indexes sources by id and by write key without exposing the key', () => {
    const snapshot = buildSnapshot(rows());
    expect(snapshot.sourcesByWriteKey.get(WRITE_KEY)).toBe(snapshot.sources.get('s1'));
    expect(snapshot.sources.get('s1')).toEqual({
      id: 's1',
      name: 'Shop',
      enabled: true,
      allowedOrigins: [],
    });
  });

  it.each([
    ['no source', [], []],
    ['a source allowing every origin', [{ origins: [] }], 'any'],
    [
      'the union of the lists',
      [{ origins: ['https://a.test'] }, { origins: ['https://b.test', 'https://a.test'] }],
      ['https://a.test', 'https://b.test'],
    ],
    [
      'a disabled source left out',
      [{ origins: ['https://a.test'] }, { origins: [], disabled: true }],
      ['https://a.test'],
    ],
  ])('lists the origins CORS preflights may allow: %s', (_what, list, expected) => {
    const sources = (list as { origins: string[]; disabled?: boolean }[]).map((s, i) => ({
      id: `s${i}`,
      name: 'Shop',
      writeKey: `${WRITE_KEY}${i}`,
      enabled: !s.disabled,
      allowedOrigins: s.origins,
    }));
    const { corsOrigins } = buildSnapshot({ sources, destinations: [], webhooks: [] });
    expect(corsOrigins === 'any' ? 'any' : [...corsOrigins].sort()).toEqual(expected);
  });

  it("freezes and copies a source's allowed origins", () => {
    const input = rows();
    const origins = ['https://shop.test'];
    const snapshot = buildSnapshot({
      ...input,
      sources: [{ ...input.sources[0], allowedOrigins: origins }],
    });
    origins.push('https://evil.test');
    expect(snapshot.sources.get('s1')?.allowedOrigins).toEqual(['https://shop.test']);
    expect(Object.isFrozen(snapshot.sources.get('s1')?.allowedOrigins)).toBe(true);
  });

  it('attaches webhooks to their destination ordered by position', () => {
    const [destination] = buildSnapshot(rows()).destinationsBySource.get('s1') ?? [];
    expect(destination?.webhooks.map((webhook) => webhook.id)).toEqual(['w0', 'w2']);
  });

  it("lists a source's destinations oldest first, ties by id", () => {
    const input = rows();
    const at = (id: string, ms: number) => ({
      ...input.destinations[0],
      id,
      createdAt: new Date(ms),
    });
    const snapshot = buildSnapshot({
      ...input,
      destinations: [at('d3', 3_000), at('d2', 1_000), at('d1', 1_000)],
    });
    expect(snapshot.destinationsBySource.get('s1')?.map((d) => d.id)).toEqual(['d1', 'd2', 'd3']);
    expect(Object.isFrozen(snapshot.destinationsBySource.get('s1'))).toBe(true);
  });

  it.each([
    ['no filter', null, 'null'],
    ['a valid filter', { types: ['track'] }, 'track only'],
    ['a stored filter that no longer validates', { types: ['click'] }, 'nothing'],
  ])('compiles %s once', (_name, filter, expected) => {
    const input = rows();
    const snapshot = buildSnapshot({
      ...input,
      destinations: [{ ...input.destinations[0], filter }],
    });
    const compiled = snapshot.destinations.get('d1')?.filter;
    const described =
      compiled === null
        ? 'null'
        : compiled?.types?.size === 0
          ? 'nothing'
          : [...(compiled?.types ?? [])].join() + ' only';
    expect(described).toBe(expected);
  });

  it('gives a destination without webhooks an empty list', () => {
    const input = { ...rows(), webhooks: [] };
    expect(buildSnapshot(input).destinations.get('d1')?.webhooks).toEqual([]);
  });

  it('freezes every object it hands out', () => {
    const destination = buildSnapshot(rows()).destinations.get('d1');
    expect(Object.isFrozen(destination)).toBe(true);
    expect(Object.isFrozen(destination?.webhooks)).toBe(true);
    expect(Object.isFrozen(destination?.webhooks[0])).toBe(true);
    expect(Object.isFrozen(destination?.webhooks[0]?.headers)).toBe(true);
  });

  it('copies the ciphertext and the headers out of the loaded rows', () => {
    const input = rows();
    const snapshot = buildSnapshot(input);
    input.destinations[0].sharedSecretCiphertext?.fill(0);
    input.webhooks[1].headers.A = 'changed';
    const destination = snapshot.destinations.get('d1');
    expect(Array.from(destination?.sharedSecretCiphertext ?? [])).toEqual([1, 2, 3]);
    expect(destination?.webhooks[0]?.headers).toEqual({ A: '1' });
  });

  it.each([
    ['no rate limit', null, null],
    ['a rate limit', 50, 50],
  ])('carries %s', (_name, rateLimitPerSecond, expected) => {
    const input = rows();
    const snapshot = buildSnapshot({
      ...input,
      destinations: [{ ...input.destinations[0], rateLimitPerSecond }],
    });
    expect(snapshot.destinations.get('d1')?.rateLimitPerSecond).toBe(expected);
  });

  it.each([
    ['no batching', null, null],
    ['batching', 500, { maxCalls: 500, maxBytes: 2048, maxWaitMs: 250 }],
  ])('carries %s', (_name, batchMaxCalls, expected) => {
    const input = rows();
    const snapshot = buildSnapshot({
      ...input,
      destinations: [
        { ...input.destinations[0], batchMaxCalls, batchMaxBytes: 2048, batchMaxWaitMs: 250 },
      ],
    });
    expect(snapshot.destinations.get('d1')?.batching).toEqual(expected);
  });

  it.each([false, true])('carries whether the POSTs send a traceparent (%s)', (sendTraceparent) => {
    const input = rows();
    const snapshot = buildSnapshot({
      ...input,
      destinations: [{ ...input.destinations[0], sendTraceparent }],
    });
    expect(snapshot.destinations.get('d1')?.sendTraceparent).toBe(sendTraceparent);
  });

  it('keeps a missing secret as null', () => {
    const input = rows();
    const snapshot = buildSnapshot({
      ...input,
      destinations: [{ ...input.destinations[0], sharedSecretCiphertext: null }],
    });
    expect(snapshot.destinations.get('d1')?.sharedSecretCiphertext).toBeNull();
  });

  it("carries the signature mode and a rotation's previous secret (a copy) with its expiry", () => {
    const input = rows();
    const previous = Buffer.from([4, 5]);
    const snapshot = buildSnapshot({
      ...input,
      destinations: [
        {
          ...input.destinations[0],
          signatureMode: 'standard-webhooks',
          previousSecretCiphertext: previous,
          previousSecretExpiresAt: new Date(1_795_392_000_000),
        },
      ],
    });
    previous.fill(0);
    expect(snapshot.destinations.get('d1')).toMatchObject({
      signatureMode: 'standard-webhooks',
      previousSecretCiphertext: Uint8Array.from([4, 5]),
      previousSecretExpiresAt: 1_795_392_000_000,
    });
  });

  it('defaults to x-signature without a previous secret', () => {
    expect(buildSnapshot(rows()).destinations.get('d1')).toMatchObject({
      signatureMode: 'x-signature',
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
    });
  });
});

describe('EMPTY_SNAPSHOT', () => {
  it('knows no source', () => {
    expect(EMPTY_SNAPSHOT.sourcesByWriteKey.size).toBe(0);
  });
});
