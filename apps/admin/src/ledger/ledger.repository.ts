import { DataSource } from 'typeorm';

import { DeadPointer, LedgerRow } from './ledger-rows';

/**
 * Upserts a batch in one statement: one array parameter per column (unnest). An outcome
 * replaces the row only when it is newer (more attempts, then a later time), so repeats and
 * late arrivals change nothing; its history entries are appended.
 */
const UPSERT_ROWS = `
  INSERT INTO "delivery_ledger" ("id", "first_attempt_at", "source_id", "destination_id",
    "message_id", "call_type", "event", "state", "reason", "last_status", "last_detail",
    "last_latency_ms", "attempts", "next_attempt_at", "updated_at", "history", "replay_of",
    "user_id", "anonymous_id")
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
    $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::real[],
    $13::int[], $14::timestamptz[], $15::timestamptz[], $16::jsonb[], $17::uuid[], $18::text[],
    $19::text[])
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
    "replay_of" = COALESCE(EXCLUDED."replay_of", "delivery_ledger"."replay_of"),
    "user_id" = COALESCE(EXCLUDED."user_id", "delivery_ledger"."user_id"),
    "anonymous_id" = COALESCE(EXCLUDED."anonymous_id", "delivery_ledger"."anonymous_id")
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
    "reason", "last_status", "user_id", "anonymous_id")
  SELECT "id", "first_attempt_at", "source_id", "destination_id", "message_id", "call_type",
    'dead', -1, "updated_at", "dead_partition", "dead_offset", "reason", "last_status",
    "user_id", "anonymous_id"
  FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::timestamptz[], $8::int[], $9::bigint[], $10::text[], $11::int[], $12::text[],
    $13::text[])
    AS p("id", "first_attempt_at", "source_id", "destination_id", "message_id", "call_type",
      "updated_at", "dead_partition", "dead_offset", "reason", "last_status", "user_id",
      "anonymous_id")
  ON CONFLICT ("id", "first_attempt_at") DO UPDATE SET
    "dead_partition" = EXCLUDED."dead_partition",
    "dead_offset" = EXCLUDED."dead_offset",
    "user_id" = COALESCE("delivery_ledger"."user_id", EXCLUDED."user_id"),
    "anonymous_id" = COALESCE("delivery_ledger"."anonymous_id", EXCLUDED."anonymous_id")`;

/** The day partitions of the ledger table, by name. */
const PARTITION_NAMES = `
  SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent
   WHERE p.relname = 'delivery_ledger'`;

/** PostgreSQL's `duplicate_table`: another writer made the partition first. */
const DUPLICATE_TABLE = '42P07';

/**
 * The delivery ledger's SQL: the batched upserts of outcomes and dead-letter pointers, and
 * its day partitions. The rules about what to write live above it (`LedgerWriter`,
 * `ledger-rows.ts`, `ledger-partitions.ts`); the rules the statements themselves hold (which
 * outcome wins, the placeholder row) are tested against PostgreSQL (`test/medium/ledger/`).
 */
export class LedgerRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Upserts rows, one per delivery (a statement cannot touch a row twice). */
  async upsertRows(rows: readonly LedgerRow[]): Promise<void> {
    if (rows.length > 0) await this.dataSource.query(UPSERT_ROWS, rowColumns(rows));
  }

  /** Upserts dead-letter pointers, one per delivery. */
  async upsertPointers(pointers: readonly DeadPointer[]): Promise<void> {
    if (pointers.length > 0) {
      await this.dataSource.query(UPSERT_POINTERS, pointerColumns(pointers));
    }
  }

  /** Makes the partition `name` for times in [from, to) unless it exists. */
  async createPartition(name: string, from: Date, to: Date): Promise<void> {
    try {
      await this.dataSource.query(
        `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF "delivery_ledger"
           FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
      );
    } catch (error) {
      // Another writer made it between the check and the statement.
      if ((error as { code?: string }).code !== DUPLICATE_TABLE) throw error;
    }
  }

  /** The names of the ledger's partitions. */
  async partitionNames(): Promise<string[]> {
    const rows: { name: string }[] = await this.dataSource.query(PARTITION_NAMES);
    return rows.map((row) => row.name);
  }

  async dropPartition(name: string): Promise<void> {
    await this.dataSource.query(`DROP TABLE IF EXISTS "${name}"`);
  }
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
    column((r) => r.userId),
    column((r) => r.anonymousId),
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
    column((p) => p.userId),
    column((p) => p.anonymousId),
  ];
}
