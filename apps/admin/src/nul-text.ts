/**
 * Whether a parsed JSON value or query holds U+0000 in a string or a key. PostgreSQL cannot
 * store that character in text or jsonb, so such a request is refused whole (400) before it
 * reaches a handler, rather than failing half-way in the database.
 */
export function holdsNul(value: unknown, depth = 0): boolean {
  // Bodies are size-limited; the depth bound keeps a pathological nesting from the stack.
  if (depth > 100) return false;
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some((item) => holdsNul(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(
      ([key, item]) => key.includes('\u0000') || holdsNul(item, depth + 1),
    );
  }
  return false;
}
