import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import type { DeliveryState } from '@app/contracts';

import { FilterSql } from './delivery-filter';
import { LedgerRecord, VIEW_COLUMNS } from './delivery.view';

/** The ledger row a replay repeats: its primary key. */
export interface ReplayTarget {
  readonly id: string;
  readonly firstAttemptAt: Date;
}

/**
 * Counts each replayed delivery once on its ledger row and notes the replay's delivery id
 * (one statement per call).
 */
const COUNT_REPLAYS = `
  UPDATE "delivery_ledger" AS l SET "replays" = l."replays" + 1, "last_replay_id" = t."replay_id"
  FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[]) AS t("id", "first_attempt_at", "replay_id")
  WHERE l."id" = t."id" AND l."first_attempt_at" = t."first_attempt_at"`;

/** The delivery ledger as the admin API reads it, and the replay count it keeps on a row. */
@Injectable()
export class DeliveriesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The rows of a list statement (`listSql`), each with its first attempt in microseconds. */
  page(statement: FilterSql): Promise<(LedgerRecord & { micros: string })[]> {
    return this.dataSource.query(statement.sql, statement.params);
  }

  /** The latest ledger row of a delivery id, if any. */
  async find(id: string): Promise<LedgerRecord | undefined> {
    const rows: LedgerRecord[] = await this.dataSource.query(
      `SELECT ${VIEW_COLUMNS}, "history" FROM "delivery_ledger" WHERE "id" = $1
        ORDER BY "first_attempt_at" DESC LIMIT 1`,
      [id],
    );
    return rows[0];
  }

  /** Rows by outcome whose last outcome came at or after `since`. */
  async countsSince(since: Date): Promise<{ state: DeliveryState; count: number }[]> {
    const rows: { state: DeliveryState; count: string }[] = await this.dataSource.query(
      `SELECT "state", count(*) AS "count" FROM "delivery_ledger"
        WHERE "updated_at" >= $1 GROUP BY "state"`,
      [since],
    );
    return rows.map((row) => ({ state: row.state, count: Number(row.count) }));
  }

  /** The destinations that have a webhook with this URL now (ids as the ledger keeps them). */
  async destinationsWithUrl(url: string): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT DISTINCT "destination_id"::text AS "id" FROM "webhook" WHERE "url" = $1`,
      [url],
    );
    return rows.map((row) => row.id);
  }

  /** The names of these destinations (uuids), in one query by primary key. */
  async destinationNames(ids: readonly string[]): Promise<Map<string, string>> {
    const found: { id: string; name: string }[] = await this.dataSource.query(
      `SELECT "id", "name" FROM "destination" WHERE "id" = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(found.map((d) => [d.id, d.name]));
  }

  /** Adds one to the `replays` of each row and keeps its replay's id (`replayIds`, in order). */
  async countReplays(
    targets: readonly ReplayTarget[],
    replayIds: readonly string[],
  ): Promise<void> {
    await this.dataSource.query(COUNT_REPLAYS, [
      targets.map((t) => t.id),
      targets.map((t) => t.firstAttemptAt),
      replayIds,
    ]);
  }
}
