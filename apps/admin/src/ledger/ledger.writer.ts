import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';

import { Metrics } from '@app/observability';

import { oldestKeptDay, LedgerPartitions } from './ledger-partitions';
import { DeadPointer, foldRows, LedgerRow, rowKey } from './ledger-rows';
import { LedgerRepository } from './ledger.repository';

/** The writer's settings, from the admin app's configuration. */
export interface LedgerWriterOptions {
  /** Days of ledger kept, today included. */
  readonly retentionDays: number;
  readonly now?: () => number;
}

export const LEDGER_WRITER_OPTIONS = Symbol('LEDGER_WRITER_OPTIONS');

/** Most rows one statement writes; more wait for the next one. */
const MAX_ROWS_PER_WRITE = 2_000;

/** A row or pointer waiting for a write, with its caller's promise. */
type Entry = (
  | { readonly kind: 'row'; readonly row: LedgerRow }
  | { readonly kind: 'pointer'; readonly pointer: DeadPointer }
) & { resolve(): void; reject(error: unknown): void };

/**
 * Writes the delivery ledger in batches (group commit): everything added while a write is in
 * flight goes into the next statement, so the rate of statements adapts to the load and
 * never follows it one row at a time. `add` resolves once its row is committed, so the
 * consumer commits a record's offset only after that; a failed write rejects every row of it
 * (their records are tried again; the upsert makes a repeat harmless).
 */
@Injectable()
export class LedgerWriter {
  private readonly repository: LedgerRepository;
  private readonly partitions: LedgerPartitions;
  private readonly now: () => number;
  private queue: Entry[] = [];
  private writing = false;
  private readonly written: Counter<'kind'>;
  private readonly skipped: Counter;
  private readonly statements: Counter<'result'>;

  constructor(
    dataSource: DataSource,
    metrics: Metrics,
    @Inject(LEDGER_WRITER_OPTIONS) private readonly options: LedgerWriterOptions,
  ) {
    this.repository = new LedgerRepository(dataSource);
    this.partitions = new LedgerPartitions(this.repository);
    this.now = options.now ?? Date.now;
    this.written = metrics.counter(
      'sluice_ledger_rows_written_total',
      'Outcomes and dead-letter pointers written to the delivery ledger',
      ['kind'],
    );
    this.skipped = metrics.counter(
      'sluice_ledger_rows_skipped_total',
      'Outcomes older than the ledger retention, not written',
    );
    this.statements = metrics.counter(
      'sluice_ledger_writes_total',
      'Batched writes of the delivery ledger, by result',
      ['result'],
    );
  }

  /** Adds an outcome's row; resolves once it is committed. */
  add(row: LedgerRow): Promise<void> {
    return this.enqueue({ kind: 'row', row });
  }

  /** Adds a dead letter's pointer; resolves once it is committed. */
  addPointer(pointer: DeadPointer): Promise<void> {
    return this.enqueue({ kind: 'pointer', pointer });
  }

  /** Drops the partitions older than the retention. */
  dropExpired(): Promise<string[]> {
    return this.partitions.dropBefore(oldestKeptDay(this.now(), this.options.retentionDays));
  }

  private enqueue(
    item: { kind: 'row'; row: LedgerRow } | { kind: 'pointer'; pointer: DeadPointer },
  ): Promise<void> {
    const done = new Promise<void>((resolve, reject) =>
      this.queue.push({ ...item, resolve, reject }),
    );
    if (!this.writing) {
      this.writing = true;
      // The rest of this tick's records join the first write.
      setImmediate(() => void this.drain());
    }
    return done;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const entries = this.queue.splice(0, MAX_ROWS_PER_WRITE);
      const rows = entries.flatMap((e) => (e.kind === 'row' ? [e.row] : []));
      const pointers = entries.flatMap((e) => (e.kind === 'pointer' ? [e.pointer] : []));
      try {
        await this.write(rows, pointers);
        this.statements.inc({ result: 'ok' });
        for (const entry of entries) entry.resolve();
      } catch (error) {
        this.statements.inc({ result: 'failed' });
        for (const entry of entries) entry.reject(error);
      }
    }
    this.writing = false;
  }

  private async write(rows: LedgerRow[], pointers: DeadPointer[]): Promise<void> {
    const oldest = oldestKeptDay(this.now(), this.options.retentionDays);
    const kept = foldRows(rows.filter((r) => r.firstAttemptAt >= oldest));
    const keptPointers = foldPointers(pointers.filter((p) => p.firstAttemptAt >= oldest));
    const skipped = rows.length - kept.length + pointers.length - keptPointers.length;
    if (skipped > 0) this.skipped.inc(skipped);
    await this.partitions.ensure([...kept, ...keptPointers].map((r) => r.firstAttemptAt));
    await this.repository.upsertRows(kept);
    if (kept.length > 0) this.written.inc({ kind: 'outcome' }, kept.length);
    await this.repository.upsertPointers(keptPointers);
    if (keptPointers.length > 0) this.written.inc({ kind: 'dead_letter' }, keptPointers.length);
  }
}

/** The last pointer of each delivery (one statement cannot touch a row twice). */
function foldPointers(pointers: readonly DeadPointer[]): DeadPointer[] {
  const byId = new Map<string, DeadPointer>();
  for (const p of pointers) byId.set(rowKey(p), p);
  return [...byId.values()];
}
