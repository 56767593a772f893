/** An error as a log line's text; Nest hands handler errors back as plain `{ status, message }`. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
}
