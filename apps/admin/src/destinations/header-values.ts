/**
 * What every answer shows in place of a static header's value: the values are often
 * credentials (an `Authorization` header), stored encrypted like the shared secret.
 */
export const MASKED_HEADER_VALUE = '********';

/** A webhook's static headers as the API shows them: the names, every value masked. */
export function maskedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED_HEADER_VALUE]));
}

/** The headers to store, or the name whose masked value has no stored value to keep. */
export type SealedHeaders =
  | { readonly ok: true; readonly headers: Record<string, string> }
  | { readonly ok: false; readonly name: string };

/**
 * The static headers to store from a request: every value sealed, except a masked value,
 * which keeps the stored (sealed) value of the same name, compared case-insensitively as
 * HTTP does. So a webhook read with GET can be sent back unchanged without losing its values.
 */
export function sealedHeaders(
  input: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, string>>,
  seal: (value: string) => string,
): SealedHeaders {
  const storedByName = new Map(
    Object.entries(stored).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value !== MASKED_HEADER_VALUE) {
      headers[name] = seal(value);
      continue;
    }
    const kept = storedByName.get(name.toLowerCase());
    if (kept === undefined) return { ok: false, name };
    headers[name] = kept;
  }
  return { ok: true, headers };
}
