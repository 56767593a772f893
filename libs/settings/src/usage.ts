import { DataSource } from 'typeorm';

/** Calls accepted for one source on one UTC day (`YYYY-MM-DD`). */
export interface UsageCount {
  readonly sourceId: string;
  readonly day: string;
  readonly calls: number;
}

/**
 * Adds counts to `source_usage` in one statement (insert, or add to the existing row).
 * Counts of sources deleted meanwhile are dropped: the foreign key would refuse them.
 */
export async function addUsage(
  dataSource: DataSource,
  counts: readonly UsageCount[],
): Promise<void> {
  if (counts.length === 0) return;
  await dataSource.query(
    `INSERT INTO "source_usage" ("source_id", "day", "calls")
     SELECT u.source_id, u.day, u.calls
     FROM unnest($1::uuid[], $2::date[], $3::bigint[]) AS u(source_id, day, calls)
     WHERE EXISTS (SELECT 1 FROM "source" s WHERE s.id = u.source_id)
     ON CONFLICT ("source_id", "day")
     DO UPDATE SET "calls" = "source_usage"."calls" + EXCLUDED."calls"`,
    [counts.map((c) => c.sourceId), counts.map((c) => c.day), counts.map((c) => c.calls)],
  );
}

/** Calls accepted per UTC day for one source, oldest first, between two days inclusive. */
export async function readUsage(
  dataSource: DataSource,
  sourceId: string,
  fromDay: string,
  toDay: string,
): Promise<{ day: string; calls: number }[]> {
  const rows: { day: string; calls: string }[] = await dataSource.query(
    `SELECT to_char("day", 'YYYY-MM-DD') AS day, "calls"::text AS calls FROM "source_usage"
     WHERE "source_id" = $1 AND "day" BETWEEN $2::date AND $3::date ORDER BY "day"`,
    [sourceId, fromDay, toDay],
  );
  return rows.map((row) => ({ day: row.day, calls: Number(row.calls) }));
}
