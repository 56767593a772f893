import { MAX_TRAIT_KEY_LENGTH, traitKey } from './trait-key';

describe(traitKey.name, () => {
  it.each([
    ['First Time Shopper', 'first_time_shopper'],
    ['first time shopper', 'first_time_shopper'],
    ['  padded  name  ', 'padded_name'],
    ['already_snake_case', 'already_snake_case'],
  ])('turns words into snake_case: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each([
    ['High-Value, Repeat Buyers!', 'high_value_repeat_buyers'],
    ['a -- b __ c...d', 'a_b_c_d'],
    ['C++ & Rust fans', 'c_rust_fans'],
    ['(beta) users / EU', 'beta_users_eu'],
    ['tab\tand\nnewline', 'tab_and_newline'],
  ])('makes one _ of every run of punctuation and separators: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each([
    ["Men's Shoes", 'mens_shoes'],
    ['Women’s Wear', 'womens_wear'],
    ["'quoted'", 'quoted'],
  ])('drops apostrophes inside words: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each([
    ['firstTimeShopper', 'first_time_shopper'],
    ['VIPCustomers', 'vip_customers'],
    ['Top10Fans', 'top10_fans'],
    ['LTV', 'ltv'],
  ])('splits camelCase and acronyms: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each([
    ['Café Clients', 'cafe_clients'],
    ['Ünïcödé Ñame', 'unicode_name'],
    ['Straße', 'strasse'],
    ['Ærø Øresund', 'aero_oresund'],
    ['Łódź', 'lodz'],
    ['ﬁnance ＦＵＬＬ', 'finance_full'],
    ['e\u0301te\u0301', 'ete'],
  ])('strips diacritics and spells Latin letters in ASCII: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each([
    ['Spend 2024', 'spend_2024'],
    ['30 Day Buyers', '_30_day_buyers'],
    ['2nd-time buyers', '_2nd_time_buyers'],
    ['42', '_42'],
    ['¹st', '_1st'],
  ])('keeps digits and never starts with one: %p -> %p', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it.each(['', '   ', '!!!', '---', 'Кошки', '日本', '🎉'])(
    'gives an empty key for %p, which has no Latin letter or digit',
    (name) => {
      expect(traitKey(name)).toBe('');
    },
  );

  it('keeps other-script words out and Latin ones in', () => {
    expect(traitKey('Кошки cats')).toBe('cats');
  });

  it('cuts long keys without leaving a trailing _', () => {
    const key = traitKey(`${'a'.repeat(MAX_TRAIT_KEY_LENGTH - 1)} b`);
    expect(key).toBe('a'.repeat(MAX_TRAIT_KEY_LENGTH - 1));
    expect(traitKey('ß'.repeat(150))).toHaveLength(MAX_TRAIT_KEY_LENGTH);
  });

  it('always gives a key the database accepts, or none', () => {
    const names = ['Ab Cd', '9x', '__x__', 'ÀÉÎÕÜ ÿ', "O'Brien's VIPs", 'x'.repeat(300)];
    for (const name of names) expect(traitKey(name)).toMatch(/^_?[a-z0-9]+(_[a-z0-9]+)*$/);
  });
});
