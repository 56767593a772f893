import type { KafkaMessage } from 'kafkajs';

import { BatchContext, FetchedMessage } from '../internals/fetched-message';
import { dueAtOf } from '../semantics/due-time';
import { HeaderNames, headerText, headerTexts } from '../semantics/records';
import { incomingRecord } from './incoming-record';

/** A zigzag varint, as Kafka's record format writes lengths and counts. */
function varint(n: number): Buffer {
  let raw = n >= 0 ? n * 2 : -n * 2 - 1;
  const bytes: number[] = [];
  while (raw >= 0x80) {
    bytes.push((raw % 0x80) | 0x80);
    raw = Math.floor(raw / 0x80);
  }
  bytes.push(raw);
  return Buffer.from(bytes);
}

function bytesField(value: string | null): Buffer {
  if (value === null) return varint(-1);
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([varint(bytes.length), bytes]);
}

const CONTEXT = { firstOffset: '40' } as BatchContext;

/** A fetched message whose headers are `pairs`, behind some unrelated bytes. */
function fetched(pairs: readonly [string, string | null][]): FetchedMessage {
  const prefix = Buffer.from('other records');
  const headers = Buffer.concat(
    pairs.flatMap(([name, value]) => [bytesField(name), bytesField(value)]),
  );
  const bytes = Buffer.concat([prefix, headers]);
  const key = Buffer.from('k');
  const value = Buffer.from('{}');
  return new FetchedMessage(
    2,
    0,
    '1795000000000',
    '42',
    key,
    value,
    false,
    CONTEXT,
    bytes,
    prefix.length,
    pairs.length,
  );
}

describe(incomingRecord.name, () => {
  it.each<[string, [string, string | null][], Record<string, string | null>]>([
    ['no headers', [], {}],
    [
      'plain headers',
      [
        ['sluice-destination-id', 'd-1'],
        ['sluice-attempt', '2'],
      ],
      { 'sluice-destination-id': 'd-1', 'sluice-attempt': '2' },
    ],
    [
      'a repeated name (its last value)',
      [
        ['h', 'first'],
        ['h', 'last'],
      ],
      { h: 'last' },
    ],
    ['a null value', [['h', null]], { h: null }],
    ['text of any kind', [['Zoë → 東京', '✓ "x"']], { 'Zoë → 東京': '✓ "x"' }],
  ])("reads a fetched record's headers by name and as a map alike: %s", (_, pairs, expected) => {
    const record = incomingRecord('t', 3, fetched(pairs) as unknown as KafkaMessage);
    for (const name of [...Object.keys(expected), 'absent']) {
      expect(headerText(record, name)).toBe(expected[name] ?? undefined);
      expect(record.headers[name]?.toString('utf8')).toBe(expected[name] ?? undefined);
    }
    expect(Object.keys(record.headers)).toEqual(Object.keys(expected));
    // Read together in one pass, in the names' order, as each is read alone.
    const names = [...Object.keys(expected), 'absent', 'null'].reverse();
    expect(headerTexts(record, new HeaderNames(names))).toEqual(
      names.map((name) => expected[name] ?? undefined),
    );
  });

  it.each<[string, [string, string | null][], string[], (string | undefined)[]]>([
    [
      'names of one length',
      [
        ['sluice-a', '1'],
        ['sluice-b', '2'],
        ['other-cc', '3'],
      ],
      ['sluice-b', 'other-cc', 'sluice-a', 'sluice-c'],
      ['2', '3', '1', undefined],
    ],
    [
      'a repeated name whose last value is null',
      [
        ['h', 'first'],
        ['h', null],
      ],
      ['h'],
      [undefined],
    ],
    [
      'a name that is a prefix of a header',
      [['sluice-event-name', 'e']],
      ['sluice-event'],
      [undefined],
    ],
    [
      'ASCII, empty and other values side by side',
      [
        ['a', 'plain'],
        ['b', 'Zoë'],
        ['c', ''],
        ['d', '東京 ✓'],
        ['e', 'tail'],
      ],
      ['e', 'd', 'c', 'b', 'a'],
      ['tail', '東京 ✓', '', 'Zoë', 'plain'],
    ],
    [
      'lengths of two bytes between the values',
      [
        ['a', 'first'],
        ['long', 'é'.repeat(100)],
        ['skipped', 'y'.repeat(300)],
        ['b', 'last'],
      ],
      ['b', 'a', 'long'],
      ['last', 'first', 'é'.repeat(100)],
    ],
    [
      'values farther apart than one decoding spans',
      [
        ['a', 'first'],
        ['big', 'x'.repeat(5_000)],
        ['b', 'last'],
      ],
      ['b', 'a'],
      ['last', 'first'],
    ],
    [
      'a far value read too',
      [
        ['a', 'first'],
        ['big', 'x'.repeat(5_000)],
        ['b', 'last'],
      ],
      ['b', 'big', 'a'],
      ['last', 'x'.repeat(5_000), 'first'],
    ],
  ])('reads several headers of a fetched record at once: %s', (_, pairs, names, expected) => {
    const record = incomingRecord('t', 3, fetched(pairs) as unknown as KafkaMessage);
    expect(headerTexts(record, new HeaderNames(names))).toEqual(expected);
    expect(names.map((name) => headerText(record, name))).toEqual(expected);
  });

  it("keeps a fetched record's other fields", () => {
    const record = incomingRecord('t', 3, fetched([]) as unknown as KafkaMessage);
    expect([record.topic, record.partition, record.offset, record.timestamp]).toEqual([
      't',
      3,
      '42',
      1_795_000_000_000,
    ]);
    expect([record.key?.toString(), record.value?.toString()]).toEqual(['k', '{}']);
  });

  it('reads a due time from the fetched bytes', () => {
    const record = incomingRecord(
      't',
      0,
      fetched([['due', '1795000000123']]) as unknown as KafkaMessage,
    );
    expect(dueAtOf(record, 'due')).toBe(1_795_000_000_123);
    expect(dueAtOf(record, 'other')).toBeUndefined();
  });

  it("reads a message of kafkajs's own decoder through its header map", () => {
    const message = {
      offset: '7',
      key: null,
      value: null,
      timestamp: '5',
      headers: { h: [Buffer.from('a'), 'b'] },
    };
    const record = incomingRecord('t', 0, message as unknown as KafkaMessage);
    expect(headerText(record, 'h')).toBe('b');
    expect(headerTexts(record, new HeaderNames(['absent', 'h']))).toEqual([undefined, 'b']);
    expect(record.text).toBeUndefined();
  });
});
