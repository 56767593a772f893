import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';

import { DestinationEntity, SourceEntity } from '@app/settings';

import { ReplayJobRecord, ReplayJobStatus } from './delivery.view';

/** What a job replays: a destination's dead rows, by first attempt, dead when it began. */
export interface JobFilter {
  readonly destinationId: string;
  readonly from: Date;
  readonly to: Date;
  readonly reason: string | undefined;
  /** Only rows never replayed (`replays` 0). */
  readonly notReplayed: boolean;
  /** Rows whose last outcome came later (replays that died again among them) are left out. */
  readonly deadBy: Date;
}

/** Where a job stands after a finished page: the last row's order key, and the counts then. */
export interface Checkpoint {
  readonly micros: string;
  readonly id: string;
  readonly replayed: number;
  readonly failed: number;
}

/** A job row as the claiming query returns it. */
export interface JobRow extends ReplayJobRecord {
  readonly filter: { from: string; to: string; reason: string | null; notReplayed?: boolean };
  readonly checkpoint: Checkpoint | null;
}

/** A row to replay, and its place in the job's order. */
export interface DeadRow {
  readonly id: string;
  readonly first_attempt_at: Date;
  readonly dead_partition: number;
  readonly dead_offset: string;
  readonly micros: string;
}

/** A place in a job's order: after this row. */
export type PageKey = Pick<DeadRow, 'micros' | 'id'>;

/** The fields a new job is stored with. */
export interface NewReplayJob {
  readonly id: string;
  readonly filter: JobFilter;
  readonly total: number;
}

/** The destination a job replays, or which of it and its source does not exist. */
export type JobTarget =
  | { readonly kind: 'no_source' }
  | { readonly kind: 'no_destination' }
  | { readonly kind: 'found'; readonly destination: DestinationEntity };

/** The rows of a filter: dead, with a dead-letter position, in the range. */
const FILTER_SQL = `
  "destination_id" = $1 AND "state" = 'dead' AND "dead_partition" IS NOT NULL
  AND "first_attempt_at" >= $2 AND "first_attempt_at" < $3 AND "updated_at" <= $4
  AND ($5::text IS NULL OR "reason" = $5) AND (NOT $6::boolean OR "replays" = 0)`;

/**
 * The replay jobs' SQL: the ledger rows a job covers, page by page in (first attempt, id)
 * order, and the job row: progress, checkpoints, heartbeats, and the claim of a job left
 * behind, which re-checks the heartbeat under the row's lock so that two instances never
 * take the same job (`test/medium/admin/`).
 */
@Injectable()
export class ReplayJobsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The source's destination with this id, or its oldest when `destinationId` is undefined
   * (an id that is not a UUID names none).
   */
  async destinationOf(sourceId: string, destinationId: string | undefined): Promise<JobTarget> {
    if (!(await this.dataSource.getRepository(SourceEntity).existsBy({ id: sourceId }))) {
      return { kind: 'no_source' };
    }
    if (destinationId !== undefined && !isUUID(destinationId)) return { kind: 'no_destination' };
    const destination = await this.dataSource.getRepository(DestinationEntity).findOne({
      where: destinationId === undefined ? { sourceId } : { sourceId, id: destinationId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return destination ? { kind: 'found', destination } : { kind: 'no_destination' };
  }

  /** How many rows the filter covers. */
  async count(filter: JobFilter): Promise<number> {
    const [{ count }]: { count: string }[] = await this.dataSource.query(
      `SELECT count(*) AS "count" FROM "delivery_ledger" WHERE ${FILTER_SQL}`,
      filterParams(filter),
    );
    return Number(count);
  }

  /**
   * Stores a job begun at `filter.deadBy`, with its heartbeat then: running, or finished at
   * once when it covers nothing.
   */
  async insert({ id, filter, total }: NewReplayJob): Promise<ReplayJobRecord> {
    const [job]: ReplayJobRecord[] = await this.dataSource.query(
      `INSERT INTO "replay_job" ("id", "destination_id", "filter", "status", "total",
         "created_at", "finished_at", "heartbeat_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $6) RETURNING *`,
      [
        id,
        filter.destinationId,
        JSON.stringify({
          from: filter.from,
          to: filter.to,
          reason: filter.reason ?? null,
          notReplayed: filter.notReplayed,
        }),
        total === 0 ? 'finished' : 'running',
        total,
        filter.deadBy,
        total === 0 ? filter.deadBy : null,
      ],
    );
    return job;
  }

  /** The latest jobs, newest first; those of one destination when it is given. */
  latest(destinationId: string | undefined, limit: number): Promise<ReplayJobRecord[]> {
    return this.dataSource.query(
      `SELECT * FROM "replay_job" WHERE ($1::uuid IS NULL OR "destination_id" = $1)
        ORDER BY "created_at" DESC, "id" DESC LIMIT $2`,
      [destinationId ?? null, limit],
    );
  }

  async findById(id: string): Promise<ReplayJobRecord | undefined> {
    const rows: ReplayJobRecord[] = await this.dataSource.query(
      `SELECT * FROM "replay_job" WHERE "id" = $1`,
      [id],
    );
    return rows[0];
  }

  /**
   * Claims the running jobs whose heartbeat is gone or older than `staleBefore`: sets their
   * heartbeat to `now` and their counts back to their checkpoint's. An UPDATE re-checks its
   * WHERE under each row's lock, so a job goes to one claimer only.
   */
  async claimLeftBehind(now: Date, staleBefore: Date): Promise<JobRow[]> {
    const [rows]: [JobRow[], number] = await this.dataSource.query(
      `UPDATE "replay_job" SET "heartbeat_at" = $1,
          "replayed" = coalesce(("checkpoint"->>'replayed')::int, 0),
          "failed" = coalesce(("checkpoint"->>'failed')::int, 0)
        WHERE "status" = 'running' AND ("heartbeat_at" IS NULL OR "heartbeat_at" < $2)
        RETURNING *`,
      [now, staleBefore],
    );
    return rows;
  }

  /** Renews the heartbeats of these jobs. */
  async beat(ids: readonly string[], at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "heartbeat_at" = $2 WHERE "id" = ANY($1::uuid[])`,
      [ids, at],
    );
  }

  /** The next `limit` rows of the filter after `after` (from the start when undefined). */
  page(filter: JobFilter, after: PageKey | undefined, limit: number): Promise<DeadRow[]> {
    const params = [...filterParams(filter), after?.micros ?? null, after?.id ?? null];
    return this.dataSource.query(
      `SELECT "id", "first_attempt_at", "dead_partition", "dead_offset",
          (extract(epoch FROM "first_attempt_at") * 1000000)::bigint::text AS "micros"
        FROM "delivery_ledger"
        WHERE ${FILTER_SQL} AND ($7::text IS NULL OR ("first_attempt_at", "id") >
          (TIMESTAMPTZ 'epoch' + $7::bigint * INTERVAL '1 microsecond', $8::uuid))
        ORDER BY "first_attempt_at", "id" LIMIT ${Math.trunc(limit)}`,
      params,
    );
  }

  /** Adds to the job's counts. */
  async progress(jobId: string, replayed: number, failed: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "replayed" = "replayed" + $2, "failed" = "failed" + $3
        WHERE "id" = $1`,
      [jobId, replayed, failed],
    );
  }

  /** Records where the job stands after a finished page, with its counts then. */
  async checkpoint(jobId: string, last: PageKey): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "checkpoint" = jsonb_build_object('micros', $2::text,
          'id', $3::text, 'replayed', "replayed", 'failed', "failed")
        WHERE "id" = $1`,
      [jobId, last.micros, last.id],
    );
  }

  /** Clears the job's heartbeat: any instance may take it up at once. */
  async letGo(jobId: string): Promise<void> {
    await this.dataSource.query(`UPDATE "replay_job" SET "heartbeat_at" = NULL WHERE "id" = $1`, [
      jobId,
    ]);
  }

  async finish(
    jobId: string,
    status: Exclude<ReplayJobStatus, 'running'>,
    error: string | null,
    at: Date,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "status" = $2, "error" = $3, "finished_at" = $4 WHERE "id" = $1`,
      [jobId, status, error, at],
    );
  }
}

function filterParams(filter: JobFilter): unknown[] {
  return [
    filter.destinationId,
    filter.from,
    filter.to,
    filter.deadBy,
    filter.reason ?? null,
    filter.notReplayed,
  ];
}
