import { breakerChangeJson, parseBreakerChange } from './breaker-changes';

describe(parseBreakerChange.name, () => {
  const record = {
    destinationId: 'd-1',
    replica: 'host-1',
    state: 'open',
    since: 5,
    at: 7,
  } as const;

  it('reads back what breakerChangeJson wrote', () => {
    expect(parseBreakerChange(Buffer.from(breakerChangeJson(record)))).toEqual(record);
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['an unknown state', JSON.stringify({ ...record, state: 'ajar' })],
    ['no replica', JSON.stringify({ ...record, replica: undefined })],
    ['a since that is not a number', JSON.stringify({ ...record, since: '5' })],
  ])('refuses %s', (_name, value) => {
    expect(parseBreakerChange(value)).toBeUndefined();
  });
});
