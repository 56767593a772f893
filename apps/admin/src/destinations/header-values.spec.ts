import { MASKED_HEADER_VALUE, maskedHeaders, sealedHeaders } from './header-values';

const seal = (value: string) => `sealed(${value})`;

describe(sealedHeaders.name, () => {
  it.each([
    ['seals every new value', { A: 'one', B: 'two' }, {}, { A: 'sealed(one)', B: 'sealed(two)' }],
    [
      'keeps the stored value of a masked one',
      { Authorization: MASKED_HEADER_VALUE, B: 'two' },
      { Authorization: 'sealed(old)' },
      { Authorization: 'sealed(old)', B: 'sealed(two)' },
    ],
    [
      'matches a masked name case-insensitively',
      { authorization: MASKED_HEADER_VALUE },
      { Authorization: 'sealed(old)' },
      { authorization: 'sealed(old)' },
    ],
    [
      'replaces a stored value given anew',
      { Authorization: 'Bearer new' },
      { Authorization: 'sealed(old)' },
      { Authorization: 'sealed(Bearer new)' },
    ],
    ['drops what the request leaves out', {}, { Authorization: 'sealed(old)' }, {}],
  ])('%s', (_name, input, stored, expected) => {
    expect(sealedHeaders(input, stored, seal)).toEqual({ ok: true, headers: expected });
  });

  it('refuses a masked value with no stored value of that name', () => {
    expect(sealedHeaders({ 'X-Key': MASKED_HEADER_VALUE }, { Other: 'sealed(x)' }, seal)).toEqual({
      ok: false,
      name: 'X-Key',
    });
  });
});

describe(maskedHeaders.name, () => {
  it('shows the names with every value masked', () => {
    expect(maskedHeaders({ Authorization: 'sealed', 'X-Team': 'sealed' })).toEqual({
      Authorization: MASKED_HEADER_VALUE,
      'X-Team': MASKED_HEADER_VALUE,
    });
  });
});
