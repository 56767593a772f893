import { IncomingRecord } from './records';

/**
 * When a record may be handled (epoch ms), read from its `header` (epoch ms as text);
 * undefined when due at once: no header named, none on the record, or not a number (a
 * malformed due time must not stall a partition).
 */
export function dueAtOf(record: IncomingRecord, header: string | undefined): number | undefined {
  const raw = header ? record.headers[header]?.toString('utf8') : undefined;
  if (raw === undefined) return undefined;
  const dueAt = Number(raw);
  return Number.isFinite(dueAt) ? dueAt : undefined;
}
