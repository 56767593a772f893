import { dueAtOf } from './due-time';
import { IncomingRecord } from './records';

function recordWith(headers: Record<string, Buffer | undefined>): IncomingRecord {
  return { topic: 't', partition: 0, offset: '0', key: null, value: null, headers, timestamp: 0 };
}

describe(dueAtOf.name, () => {
  it.each([
    ['a due time in epoch ms', 'due', { due: Buffer.from('1700000000123') }, 1_700_000_000_123],
    ['no header named (every record due at once)', undefined, { due: Buffer.from('5') }, undefined],
    ['the header absent from the record', 'due', {}, undefined],
    [
      'a malformed value (due now rather than never)',
      'due',
      { due: Buffer.from('soon') },
      undefined,
    ],
    ['an infinite value', 'due', { due: Buffer.from('Infinity') }, undefined],
  ])('reads %s', (_case, header, headers, expected) => {
    expect(dueAtOf(recordWith(headers), header)).toBe(expected);
  });
});
