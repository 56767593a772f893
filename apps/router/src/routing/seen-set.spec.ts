import { FingerprintTable, fingerprint, SeenWindow } from './seen-set';

const SEEDS: [number, number] = [0x12345678, 0x9abcdef0];

function print(sourceId: string, messageId: string, seeds = SEEDS): [number, number] {
  const out = new Uint32Array(2);
  fingerprint(seeds, Buffer.from(sourceId), Buffer.from(messageId), out);
  return [out[0], out[1]];
}

describe(fingerprint.name, () => {
  it('is the same for the same source and message id', () => {
    expect(print('s-1', 'm-1')).toEqual(print('s-1', 'm-1'));
  });

  it.each([
    ['another message id', 's-1', 'm-2'],
    ['another source', 's-2', 'm-1'],
    ['the boundary moved between source and message id', 's-1m', '-1'],
  ])('differs for %s', (_what, sourceId, messageId) => {
    expect(print(sourceId, messageId)).not.toEqual(print('s-1', 'm-1'));
  });

  it('depends on the seeds', () => {
    expect(print('s-1', 'm-1', [1, 2])).not.toEqual(print('s-1', 'm-1'));
  });

  it('spreads 100,000 message ids without a collision of 64 bits', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i += 1) seen.add(print('s-1', `message-${i}`).join(':'));
    expect(seen.size).toBe(100_000);
  });
});

describe(FingerprintTable.name, () => {
  it('finds what it holds, with its offset, and -1 for the rest', () => {
    const table = new FingerprintTable(4);
    table.add(1, 2, 10);
    table.add(3, 4, 11);
    expect(table.find(1, 2)).toBe(10);
    expect(table.find(3, 4)).toBe(11);
    expect(table.find(1, 3)).toBe(-1);
  });

  it('grows past its load and keeps every entry', () => {
    const table = new FingerprintTable(4);
    for (let i = 1; i <= 5_000; i += 1) table.add(i, i * 7, i);
    expect(table.size).toBe(5_000);
    for (let i = 1; i <= 5_000; i += 1) expect(table.find(i, i * 7)).toBe(i);
    expect(table.bytes).toBe(8_192 * 16);
  });

  it('holds the all-zero fingerprint', () => {
    const table = new FingerprintTable(4);
    table.add(0, 0, 5);
    expect(table.find(0, 0)).toBe(5);
  });
});

describe(SeenWindow.name, () => {
  const WINDOW_MS = 60_000;

  it('answers first, then again at the same offset, duplicate at another', () => {
    const seen = new SeenWindow(WINDOW_MS);
    expect(seen.check(1, 2, 10, 1_000)).toBe('first');
    expect(seen.check(1, 2, 10, 1_000)).toBe('again');
    expect(seen.check(1, 2, 11, 2_000)).toBe('duplicate');
    expect(seen.size).toBe(1);
  });

  it('still knows a call at the end of the window', () => {
    const seen = new SeenWindow(WINDOW_MS);
    seen.check(1, 2, 10, 1_000);
    expect(seen.check(1, 2, 11, 1_000 + WINDOW_MS)).toBe('duplicate');
  });

  it('forgets a call once the partition has moved on by more than 1.25 windows', () => {
    const seen = new SeenWindow(WINDOW_MS);
    seen.check(1, 2, 10, 1_000);
    seen.check(5, 6, 11, 1_000 + WINDOW_MS * 1.25 + 1);
    expect(seen.size).toBe(1);
    expect(seen.check(1, 2, 12, 1_000 + WINDOW_MS * 1.25 + 2)).toBe('first');
  });

  it('measures the window by record time, so a backlog is de-duplicated within itself', () => {
    const seen = new SeenWindow(WINDOW_MS);
    seen.check(1, 2, 10, 1_000);
    // Handled an hour later by the clock: only record times count.
    expect(seen.check(1, 2, 11, 2_000)).toBe('duplicate');
  });

  it('checks a record older than the window without remembering it', () => {
    const seen = new SeenWindow(WINDOW_MS);
    seen.check(5, 6, 10, 10 * WINDOW_MS);
    expect(seen.check(1, 2, 11, WINDOW_MS)).toBe('first');
    expect(seen.size).toBe(1);
  });
});
