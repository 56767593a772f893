/**
 * Letters that Unicode compatibility decomposition (NFKD) leaves whole, spelled in ASCII, so
 * that a name in a Latin-script language keeps its letters in the key.
 */
const LATIN_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'SS',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ł: 'l',
  Ł: 'L',
  ı: 'i',
};

/** Longest trait key; names are at most 200 characters, and ß or æ may double a letter. */
export const MAX_TRAIT_KEY_LENGTH = 200;

/**
 * The trait key of an audience or computed trait name: its snake_case form.
 *
 * 1. Diacritics are stripped (NFKD, then combining marks dropped: `Café` -> `cafe`,
 *    `ﬁ` -> `fi`).
 * 2. Apostrophes vanish inside words (`Men's` -> `mens`).
 * 3. Word boundaries inside camelCase and acronyms become separators (`firstTime` ->
 *    `first_time`, `VIPCustomers` -> `vip_customers`, `Top10Fans` -> `top10_fans`); then the
 *    Latin letters NFKD keeps whole are spelled out (`ß` -> `ss`, `Æ` -> `ae`, `ł` -> `l`).
 * 4. Lower case; every run of anything but `a-z` and `0-9` (spaces, punctuation, symbols,
 *    letters of other scripts) becomes one `_`, trimmed at both ends.
 * 5. A key that would start with a digit gets a leading `_` (`30 Day Buyers` ->
 *    `_30_day_buyers`), so it is an identifier in JavaScript, Python and SQL alike.
 * 6. Cut to {@link MAX_TRAIT_KEY_LENGTH} characters, without a trailing `_`.
 *
 * The result matches `^_?[a-z0-9]+(_[a-z0-9]+)*$`, or is empty when the name has no Latin
 * letter or digit at all (`"!!!"`, `"Кошки"`): such a name is refused.
 */
export function traitKey(name: string): string {
  const key = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/([\p{L}\p{N}])['’]([\p{L}\p{N}])/gu, '$1$2')
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2')
    .replace(/[ßẞæÆœŒøØđĐðÐþÞłŁı]/g, (letter) => LATIN_LETTERS[letter] ?? letter)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (key === '') return '';
  const prefixed = /^[0-9]/.test(key) ? `_${key}` : key;
  return prefixed.slice(0, MAX_TRAIT_KEY_LENGTH).replace(/_+$/, '');
}
