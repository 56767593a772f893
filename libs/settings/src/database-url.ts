/**
 * Describes a PostgreSQL URL for logs: scheme, host, port and database, never the user's
 * password (nor the query string, which may carry TLS key paths or passwords too).
 * An unparsable URL is described as `<invalid database url>` rather than echoed.
 */
export function describeDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<invalid database url>';
  }
  const user = parsed.username ? `${parsed.username}@` : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
}

/** The password of a PostgreSQL URL, decoded, or undefined when it has none. */
export function databaseUrlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An error's message, safe to log: any occurrence of the given secrets is replaced with
 * `***`. Driver messages do not normally carry the password; this is a second line of defence.
 */
export function safeErrorMessage(error: unknown, secrets: readonly (string | undefined)[]): string {
  let message = error instanceof Error ? error.message : String(error);
  for (const secret of secrets) {
    if (secret) message = message.split(secret).join('***');
  }
  return message;
}
