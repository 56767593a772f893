import { headerText, IncomingRecord } from './records';

/**
 * When a record may be handled (epoch ms), read from its `header` (epoch ms as text);
 * undefined when due at once: no header named, none on the record, or not a number (a
 * malformed due time must not stall a partition).
 */
export function dueAtOf(record: IncomingRecord, header: string | undefined): number | undefined {
  const raw = header ? headerText(record, header) : undefined;
  if (raw === undefined) return undefined;
  const dueAt = Number(raw);
  return Number.isFinite(dueAt) ? dueAt : undefined;
}

/**
 * Waits for records' due times, one wait per time: records waiting for one time resume in the
 * order they started waiting.
 */
export class DueWaits {
  /** The wait for the latest due time asked for. */
  private latest: { readonly at: number; readonly until: Promise<void> } | undefined;

  constructor(private readonly now: () => number) {}

  /** Resolves at `dueAt` (epoch ms). */
  until(dueAt: number): Promise<void> {
    if (this.latest?.at !== dueAt) {
      // A timer may fire a millisecond before the clock reads its time: wait again then.
      const wait = (resolve: () => void): void => {
        const waitMs = dueAt - this.now();
        if (waitMs <= 0) resolve();
        else setTimeout(() => wait(resolve), waitMs);
      };
      this.latest = { at: dueAt, until: new Promise(wait) };
    }
    return this.latest.until;
  }
}
