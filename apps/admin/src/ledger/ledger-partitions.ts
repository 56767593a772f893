import { Logger } from '@nestjs/common';

import type { LedgerRepository } from './ledger.repository';

const DAY_MS = 86_400_000;
const PARTITION = /^delivery_ledger_(\d{4})(\d{2})(\d{2})$/;

/** `delivery_ledger_20301231` for any time of that UTC day. */
export function partitionName(at: Date): string {
  return `delivery_ledger_${at.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The UTC day a partition holds, from its name; undefined for another table. */
export function partitionDay(name: string): Date | undefined {
  const match = PARTITION.exec(name);
  return match ? new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`) : undefined;
}

/** The first day kept: partitions of earlier days are dropped, rows for them skipped. */
export function oldestKeptDay(now: number, retentionDays: number): Date {
  return new Date(Math.floor(now / DAY_MS) * DAY_MS - (retentionDays - 1) * DAY_MS);
}

/**
 * The ledger's day partitions: made as rows for a new day come (remembered once made), and
 * dropped whole when older than the retention, never emptied row by row.
 */
export class LedgerPartitions {
  private readonly logger = new Logger(LedgerPartitions.name);
  private readonly known = new Set<string>();

  constructor(private readonly repository: LedgerRepository) {}

  /** Makes the partitions of the given days that do not exist yet. */
  async ensure(days: Iterable<Date>): Promise<void> {
    for (const day of days) {
      const name = partitionName(day);
      if (this.known.has(name)) continue;
      const from = new Date(Math.floor(day.getTime() / DAY_MS) * DAY_MS);
      const to = new Date(from.getTime() + DAY_MS);
      await this.repository.createPartition(name, from, to);
      this.known.add(name);
    }
  }

  /** Drops every partition of a day before `oldestKept`; answers the names dropped. */
  async dropBefore(oldestKept: Date): Promise<string[]> {
    const dropped: string[] = [];
    for (const name of await this.repository.partitionNames()) {
      const day = partitionDay(name);
      if (day === undefined || day >= oldestKept) continue;
      await this.repository.dropPartition(name);
      this.known.delete(name);
      dropped.push(name);
    }
    if (dropped.length > 0) this.logger.log(`dropped ledger partitions ${dropped.join(', ')}`);
    return dropped;
  }
}
