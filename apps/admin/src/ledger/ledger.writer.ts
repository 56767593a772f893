import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';

import { Metrics } from '@app/observability';

import { oldestKeptDay, LedgerPartitions } from './ledger-partitions';
import { DeadPointer, foldRows, LedgerRow, rowKey } from './ledger-rows';

/** The writer's settings, from the admin app's configuration. */
export interface LedgerWriterOptions {
  /** Days of ledger kept, today included. */
  readonly retentionDays: number;
  readonly now?: () => number;
}

export const LEDGER_WRITER_OPTIONS = Symbol('LEDGER_WRITER_OPTIONS');

/** Most rows one statement writes; more wait for the next one. */
const MAX_ROWS_PER_WRITE = 2_000;

/** Upserts a batch in one statement: one array parameter per column (unnest). */
const UPSERT_ROWS = `
  INSERT INTO "delivery_ledger" ("id", "first_attempt_at", "source_id", "destination_id",
    "message_id", "call_type", "event", "state", "reason", "last_status", "last_detail",
    "last_latency_ms", "attempts", "next_attempt_at", "updated_at", "history", "replay_of")
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
    $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::real[],
    $13::int[], $14::timestamptz[], $15::timestamptz[], $16::jsonb[], $17::uuid[])
  ON CONFLICT ("id", "first_attempt_at") DO UPDATE SET
    "source_id" = EXCLUDED."source_id",
    "message_id" = EXCLUDED."message_id",
    "call_type" = EXCLUDED."call_type",
    "event" = COALESCE(EXCLUDED."event", "delivery_ledger"."event"),
    "state" = EXCLUDED."state",
    "reason" = EXCLUDED."reason",
    "last_status" = EXCLUDED."last_status",
    "last_detail" = EXCLUDED."last_detail",
    "last_latency_ms" = EXCLUDED."last_latency_ms",
    "attempts" = EXCLUDED."attempts",
    "next_attempt_at" = EXCLUDED."next_attempt_at",
    "updated_at" = EXCLUDED."updated_at",
    "history" = "delivery_ledger"."history" || EXCLUDED."history",
    "replay_of" = COALESCE(EXCLUDED."replay_of", "delivery_ledger"."replay_of")
  WHERE (EXCLUDED."attempts", EXCLUDED."updated_at")
      > ("delivery_ledger"."attempts", "delivery_ledger"."updated_at")`;

/**
 * Records where dead letters sit. A pointer may come before its delivery's outcome (another
 * topic): it then makes a placeholder row (attempts -1) that any outcome overwrites, keeping
 * the pointer. The placeholder already says why and with which status, from the dead
 * letter's headers.
 */
const UPSERT_POINTERS = `
  INSERT INTO "delivery_ledger" ("id", "first_attempt_at", "source_id", "destination_id",
    "message_id", "call_type", "state", "attempts", "updated_at", "dead_partition", "dead_offset",
    "reason", "last_status")
  SELECT "id", "first_attempt_at", "source_id", "destination_id", "message_id", "call_type",
    'dead', -1, "updated_at", "dead_partition", "dead_offset", "reason", "last_status"
  FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::timestamptz[], $8::int[], $9::bigint[], $10::text[], $11::int[])
    AS p("id", "first_attempt_at", "source_id", "destination_id", "message_id", "call_type",
      "updated_at", "dead_partition", "dead_offset", "reason", "last_status")
  ON CONFLICT ("id", "first_attempt_at") DO UPDATE SET
    "dead_partition" = EXCLUDED."dead_partition",
    "dead_offset" = EXCLUDED."dead_offset"`;

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
  private readonly partitions: LedgerPartitions;
  private readonly now: () => number;
  private queue: Entry[] = [];
  private writing = false;
  private readonly written: Counter<'kind'>;
  private readonly skipped: Counter;
  private readonly statements: Counter<'result'>;

  constructor(
    private readonly dataSource: DataSource,
    metrics: Metrics,
    @Inject(LEDGER_WRITER_OPTIONS) private readonly options: LedgerWriterOptions,
  ) {
    this.partitions = new LedgerPartitions(dataSource);
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
    if (kept.length > 0) {
      await this.dataSource.query(UPSERT_ROWS, rowColumns(kept));
      this.written.inc({ kind: 'outcome' }, kept.length);
    }
    if (keptPointers.length > 0) {
      await this.dataSource.query(UPSERT_POINTERS, pointerColumns(keptPointers));
      this.written.inc({ kind: 'dead_letter' }, keptPointers.length);
    }
  }
}

/** The last pointer of each delivery (one statement cannot touch a row twice). */
function foldPointers(pointers: readonly DeadPointer[]): DeadPointer[] {
  const byId = new Map<string, DeadPointer>();
  for (const p of pointers) byId.set(rowKey(p), p);
  return [...byId.values()];
}

function rowColumns(rows: readonly LedgerRow[]): unknown[] {
  const column = <T>(pick: (row: LedgerRow) => T) => rows.map(pick);
  return [
    column((r) => r.id),
    column((r) => r.firstAttemptAt.toISOString()),
    column((r) => r.sourceId),
    column((r) => r.destinationId),
    column((r) => r.messageId),
    column((r) => r.callType),
    column((r) => r.event),
    column((r) => r.state),
    column((r) => r.reason),
    column((r) => r.lastStatus),
    column((r) => r.lastDetail),
    column((r) => r.lastLatencyMs),
    column((r) => r.attempts),
    column((r) => r.nextAttemptAt?.toISOString() ?? null),
    column((r) => r.updatedAt.toISOString()),
    column((r) => JSON.stringify(r.history)),
    column((r) => r.replayOf),
  ];
}

function pointerColumns(pointers: readonly DeadPointer[]): unknown[] {
  const column = <T>(pick: (p: DeadPointer) => T) => pointers.map(pick);
  return [
    column((p) => p.id),
    column((p) => p.firstAttemptAt.toISOString()),
    column((p) => p.sourceId),
    column((p) => p.destinationId),
    column((p) => p.messageId),
    column((p) => p.callType),
    column((p) => p.updatedAt.toISOString()),
    column((p) => p.partition),
    column((p) => p.offset),
    column((p) => p.reason),
    column((p) => p.lastStatus),
  ];
}
