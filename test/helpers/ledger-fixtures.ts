import { randomUUID } from 'node:crypto';

import { Client } from 'pg';

/** A `delivery_ledger` row written by a test; unset fields get plain defaults. */
export interface LedgerFixture {
  readonly id?: string;
  /** ISO 8601, microseconds allowed (`2026-11-25T10:00:00.123456Z`). */
  readonly firstAttemptAt: string;
  readonly sourceId?: string;
  readonly destinationId?: string;
  readonly messageId?: string;
  readonly callType?: string;
  readonly event?: string | null;
  readonly state?: 'delivered' | 'retrying' | 'dead' | 'discarded';
  readonly reason?: string | null;
  readonly lastStatus?: number | null;
  readonly lastDetail?: string | null;
  readonly lastLatencyMs?: number | null;
  readonly attempts?: number;
  readonly nextAttemptAt?: string | null;
  /** Default: 1 s after the first attempt. */
  readonly updatedAt?: string;
  readonly history?: unknown[];
  readonly deadPartition?: number | null;
  readonly deadOffset?: string | null;
  readonly replayOf?: string | null;
  readonly userId?: string | null;
  readonly anonymousId?: string | null;
  readonly lastReplayId?: string | null;
}

const DAY_MS = 86_400_000;

/**
 * Writes ledger rows as the writer would (one statement), making the day partitions they
 * need first; a row already there (the app's own writer may have placed a dead letter's
 * pointer) takes the fixture's values. Answers the rows' ids in order.
 */
export async function insertLedgerRows(
  databaseUrl: string,
  fixtures: readonly LedgerFixture[],
): Promise<string[]> {
  const rows = fixtures.map((f) => ({ ...f, id: f.id ?? randomUUID() }));
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const days = new Set(rows.map((r) => Math.floor(Date.parse(r.firstAttemptAt) / DAY_MS)));
    for (const day of days) await ensurePartition(client, day);
    const column = <T>(pick: (r: (typeof rows)[number]) => T) => rows.map(pick);
    await retryOnDeadlock(() =>
      client.query(
        `INSERT INTO "delivery_ledger" ("id", "first_attempt_at", "source_id", "destination_id",
         "message_id", "call_type", "event", "state", "reason", "last_status", "last_detail",
         "last_latency_ms", "attempts", "next_attempt_at", "updated_at", "history",
         "dead_partition", "dead_offset", "replay_of", "user_id", "anonymous_id",
         "last_replay_id")
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
         $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::real[],
         $13::int[], $14::timestamptz[], $15::timestamptz[], $16::jsonb[], $17::int[],
         $18::bigint[], $19::uuid[], $20::text[], $21::text[], $22::uuid[])
       ON CONFLICT ("id", "first_attempt_at") DO UPDATE SET
         "source_id" = EXCLUDED."source_id", "destination_id" = EXCLUDED."destination_id",
         "message_id" = EXCLUDED."message_id", "call_type" = EXCLUDED."call_type",
         "event" = EXCLUDED."event", "state" = EXCLUDED."state", "reason" = EXCLUDED."reason",
         "last_status" = EXCLUDED."last_status", "last_detail" = EXCLUDED."last_detail",
         "last_latency_ms" = EXCLUDED."last_latency_ms", "attempts" = EXCLUDED."attempts",
         "next_attempt_at" = EXCLUDED."next_attempt_at", "updated_at" = EXCLUDED."updated_at",
         "history" = EXCLUDED."history", "dead_partition" = EXCLUDED."dead_partition",
         "dead_offset" = EXCLUDED."dead_offset", "replay_of" = EXCLUDED."replay_of",
         "user_id" = EXCLUDED."user_id", "anonymous_id" = EXCLUDED."anonymous_id",
         "last_replay_id" = EXCLUDED."last_replay_id"`,
        [
          column((r) => r.id),
          column((r) => r.firstAttemptAt),
          column((r) => r.sourceId ?? randomUUID()),
          column((r) => r.destinationId ?? randomUUID()),
          column((r) => r.messageId ?? randomUUID()),
          column((r) => r.callType ?? 'track'),
          column((r) => (r.event === undefined ? 'Order Completed' : r.event)),
          column((r) => r.state ?? 'delivered'),
          column((r) => r.reason ?? null),
          column((r) => r.lastStatus ?? null),
          column((r) => r.lastDetail ?? null),
          column((r) => r.lastLatencyMs ?? null),
          column((r) => r.attempts ?? 1),
          column((r) => r.nextAttemptAt ?? null),
          column(
            (r) => r.updatedAt ?? new Date(Date.parse(r.firstAttemptAt) + 1_000).toISOString(),
          ),
          column((r) => JSON.stringify(r.history ?? [])),
          column((r) => r.deadPartition ?? null),
          column((r) => r.deadOffset ?? null),
          column((r) => r.replayOf ?? null),
          column((r) => r.userId ?? null),
          column((r) => r.anonymousId ?? null),
          column((r) => r.lastReplayId ?? null),
        ],
      ),
    );
  } finally {
    await client.end();
  }
  return rows.map((r) => r.id);
}

/**
 * Runs `statement` again when PostgreSQL aborted it to break a deadlock: the app's own ledger
 * writer may upsert the same dead letters' rows at the same moment, in another order.
 */
async function retryOnDeadlock<T>(statement: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= attempts) throw error;
    }
  }
}

/** The day partition `delivery_ledger_YYYYMMDD` of a UTC day (days since the epoch). */
async function ensurePartition(client: Client, day: number): Promise<void> {
  const from = new Date(day * DAY_MS);
  const to = new Date((day + 1) * DAY_MS);
  const name = `delivery_ledger_${from.toISOString().slice(0, 10).replaceAll('-', '')}`;
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${name}" PARTITION OF "delivery_ledger"
         FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
    );
  } catch (error) {
    // The app's ledger writer made it at the same moment.
    const code = (error as { code?: string }).code;
    if (code !== '42P07' && code !== '23505') throw error;
  }
}
