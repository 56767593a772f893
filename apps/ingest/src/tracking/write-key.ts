/**
 * The write key of an `Authorization: Basic` header: the user name, with an empty password.
 * Returns undefined when the header is not Basic or not decodable.
 */
export function writeKeyFromBasic(authorization: string): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  return user.length > 0 ? user : undefined;
}
