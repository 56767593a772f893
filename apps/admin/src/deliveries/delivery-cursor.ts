import { isUUID } from 'class-validator';

/**
 * A page's place in the ledger's order (first attempt time descending, then id descending):
 * the last row shown. The time is kept in microseconds, PostgreSQL's precision, so that no
 * row of the same millisecond is skipped or shown twice.
 */
export interface DeliveryCursor {
  /** The row's first attempt time, microseconds since the epoch (decimal digits). */
  readonly firstAttemptMicros: string;
  readonly id: string;
}

const DECODED = /^(\d{1,17}):([0-9a-f-]{36})$/;

/** The opaque string a client passes back. */
export function encodeCursor(cursor: DeliveryCursor): string {
  return Buffer.from(`${cursor.firstAttemptMicros}:${cursor.id}`).toString('base64url');
}

/** The cursor a string stands for; undefined when it is not one this API gave. */
export function decodeCursor(text: string): DeliveryCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  const match = DECODED.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!match || !isUUID(match[2])) return undefined;
  return { firstAttemptMicros: match[1], id: match[2] };
}
