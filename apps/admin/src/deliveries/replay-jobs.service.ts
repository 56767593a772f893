import {
  BadRequestException,
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';

import { TOPIC } from '@app/contracts';
import { IncomingRecord, RecordReader } from '@app/kafka';
import { DestinationEntity, SourceEntity } from '@app/settings';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { FIRST_DESTINATION } from '../destinations/destinations.service';
import { ReplayRangeDto } from './delivery.dto';
import { ReplayJobRecord, ReplayJobView, replayJobView } from './delivery.view';
import { deadLetterDeliveryId } from './replay-record';
import { Replay, Replayer } from './replayer';

/** Options of {@link ReplayJobsService}. */
export interface ReplayJobsOptions {
  /** The longest range a job may cover: the ledger's retention. */
  readonly maxRangeMs: number;
  /** Rows read from the ledger, and dead letters read from Kafka, per round. */
  readonly pageRows: number;
  /** How often a running job's heartbeat is renewed, and jobs left behind are looked for. */
  readonly heartbeatMs: number;
  /** A running job whose heartbeat is older than this was left behind (its instance died). */
  readonly staleAfterMs: number;
}

/** Dead letters a job reads from Kafka at once: one consumer group join each. */
export const REPLAY_PAGE_ROWS = 5_000;
/** Heartbeats every 10 s; a job without one for a minute is taken up by another instance. */
export const REPLAY_HEARTBEAT_MS = 10_000;
export const REPLAY_STALE_AFTER_MS = 60_000;

/** Injection token of the {@link ReplayJobsOptions}. */
export const REPLAY_JOBS_OPTIONS = Symbol('REPLAY_JOBS_OPTIONS');

/** What a job replays: a destination's dead rows, by first attempt, dead when it began. */
interface JobFilter {
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
interface Checkpoint {
  readonly micros: string;
  readonly id: string;
  readonly replayed: number;
  readonly failed: number;
}

/** A job row as the resuming query returns it. */
interface JobRow extends ReplayJobRecord {
  readonly filter: { from: string; to: string; reason: string | null; notReplayed?: boolean };
  readonly checkpoint: Checkpoint | null;
}

/** A row to replay, and its place in the job's order. */
interface DeadRow {
  readonly id: string;
  readonly first_attempt_at: Date;
  readonly dead_partition: number;
  readonly dead_offset: string;
  readonly micros: string;
}

/** The rows of a filter: dead, with a dead-letter position, in the range. */
const FILTER_SQL = `
  "destination_id" = $1 AND "state" = 'dead' AND "dead_partition" IS NOT NULL
  AND "first_attempt_at" >= $2 AND "first_attempt_at" < $3 AND "updated_at" <= $4
  AND ($5::text IS NULL OR "reason" = $5) AND (NOT $6::boolean OR "replays" = 0)`;

/**
 * Bulk replays: every dead delivery of a destination in a range of first attempts (and with
 * a reason), replayed in the background a page at a time, the job row counting progress.
 * Each row is replayed once: pages follow the rows' order (first attempt, id) without
 * overlap, and rows dead after the job began are not part of it.
 *
 * A job outlives the instance running it: the instance renews the job's heartbeat and records
 * a checkpoint after each page. A stopping instance finishes its page and lets go of the job;
 * any instance (this one after a restart included) takes up a running job whose heartbeat is
 * gone or old, from its checkpoint. After a crash, the replays of the page that was under way
 * may be produced again (at least once); after a graceful stop, none is.
 */
@Injectable()
export class ReplayJobsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReplayJobsService.name);
  private readonly running = new Set<Promise<void>>();
  /** The jobs this instance runs, whose heartbeats it renews. */
  private readonly owned = new Set<string>();
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly reader: RecordReader,
    private readonly replayer: Replayer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(REPLAY_JOBS_OPTIONS) private readonly options: ReplayJobsOptions,
  ) {}

  /** Creates the job (with the count it covers) and starts it; 404s, 409 when disabled. */
  async start(
    sourceId: string,
    dto: ReplayRangeDto,
    destinationId: string = FIRST_DESTINATION,
  ): Promise<ReplayJobView> {
    const destination = await this.destinationOf(sourceId, destinationId);
    await this.replayer.assertDestinationEnabled(destination.id);
    const filter = this.filter(destination.id, dto);
    const [{ count }]: { count: string }[] = await this.dataSource.query(
      `SELECT count(*) AS "count" FROM "delivery_ledger" WHERE ${FILTER_SQL}`,
      filterParams(filter),
    );
    const total = Number(count);
    const [job]: ReplayJobRecord[] = await this.dataSource.query(
      `INSERT INTO "replay_job" ("id", "destination_id", "filter", "status", "total",
         "created_at", "finished_at", "heartbeat_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $6) RETURNING *`,
      [
        this.clock.newId(),
        destination.id,
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
    if (total > 0) this.track(job.id, this.run(job.id, filter, undefined));
    this.logger.log(`replay job ${job.id} of destination ${destination.id}: ${total} dead letters`);
    return replayJobView(job);
  }

  /** The latest jobs, newest first; those of one destination when it is given. */
  async list(destinationId: string | undefined, limit: number): Promise<ReplayJobView[]> {
    const rows: ReplayJobRecord[] = await this.dataSource.query(
      `SELECT * FROM "replay_job" WHERE ($1::uuid IS NULL OR "destination_id" = $1)
        ORDER BY "created_at" DESC, "id" DESC LIMIT $2`,
      [destinationId ?? null, limit],
    );
    return rows.map(replayJobView);
  }

  async get(id: string): Promise<ReplayJobView> {
    const rows: ReplayJobRecord[] = await this.dataSource.query(
      `SELECT * FROM "replay_job" WHERE "id" = $1`,
      [id],
    );
    if (rows.length === 0) throw notFound('replay');
    return replayJobView(rows[0]);
  }

  onApplicationBootstrap(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Jobs in progress finish their page and are let go, for the next instance; waits for them. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await Promise.all(this.running);
  }

  /**
   * Takes up the running jobs no live instance runs (heartbeat gone or older than
   * `staleAfterMs`), each from its checkpoint; answers their ids. Two instances never take the
   * same job: the update that claims it re-checks the heartbeat under the row's lock.
   */
  async resumeLeftBehind(): Promise<string[]> {
    if (this.stopping) return [];
    const now = this.clock.now();
    const [rows]: [JobRow[], number] = await this.dataSource.query(
      `UPDATE "replay_job" SET "heartbeat_at" = $1,
          "replayed" = coalesce(("checkpoint"->>'replayed')::int, 0),
          "failed" = coalesce(("checkpoint"->>'failed')::int, 0)
        WHERE "status" = 'running' AND ("heartbeat_at" IS NULL OR "heartbeat_at" < $2)
        RETURNING *`,
      [new Date(now), new Date(now - this.options.staleAfterMs)],
    );
    for (const job of rows) {
      const filter: JobFilter = {
        destinationId: job.destination_id,
        from: new Date(job.filter.from),
        to: new Date(job.filter.to),
        reason: job.filter.reason ?? undefined,
        notReplayed: job.filter.notReplayed === true,
        deadBy: job.created_at,
      };
      const after = job.checkpoint ?? undefined;
      this.logger.log(
        `replay job ${job.id} taken up again ${after ? 'after its last finished page' : 'from its start'}`,
      );
      this.track(job.id, this.run(job.id, filter, after));
    }
    return rows.map((job) => job.id);
  }

  /** Renews the heartbeats of the jobs this instance runs, then takes up those left behind. */
  private async beat(): Promise<void> {
    try {
      if (this.owned.size > 0)
        await this.dataSource.query(
          `UPDATE "replay_job" SET "heartbeat_at" = $2 WHERE "id" = ANY($1::uuid[])`,
          [[...this.owned], new Date(this.clock.now())],
        );
      await this.resumeLeftBehind();
    } catch (error) {
      this.logger.warn(`replay job heartbeat failed: ${String(error)}`);
    }
  }

  /** The destination by id, or the source's first (oldest) one. */
  private async destinationOf(sourceId: string, destinationId: string): Promise<DestinationEntity> {
    const source = isUUID(sourceId)
      ? await this.dataSource.getRepository(SourceEntity).findOneBy({ id: sourceId })
      : null;
    if (!source) throw notFound('source');
    const first = destinationId === FIRST_DESTINATION;
    if (!first && !isUUID(destinationId)) throw notFound('destination');
    const destination = await this.dataSource.getRepository(DestinationEntity).findOne({
      where: first ? { sourceId } : { sourceId, id: destinationId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    if (!destination) throw notFound('destination');
    return destination;
  }

  private filter(destinationId: string, dto: ReplayRangeDto): JobFilter {
    const from = new Date(dto.from);
    const to = new Date(dto.to);
    const invalid = (message: string) =>
      new BadRequestException({ code: 'invalid_request', message });
    if (from >= to) throw invalid('to: must be after from');
    if (to.getTime() - from.getTime() > this.options.maxRangeMs) {
      const days = this.options.maxRangeMs / 86_400_000;
      throw invalid(`to: the range is longer than the ledger's retention (${days} days)`);
    }
    return {
      destinationId,
      from,
      to,
      reason: dto.reason,
      notReplayed: dto.notReplayed === true,
      deadBy: new Date(this.clock.now()),
    };
  }

  private track(jobId: string, job: Promise<void>): void {
    this.owned.add(jobId);
    this.running.add(job);
    void job.finally(() => {
      this.running.delete(job);
      this.owned.delete(jobId);
    });
  }

  /**
   * Replays page after page from `after` (a checkpoint); the job ends finished, or failed with
   * the reason, or, when the app stops, is let go after its page.
   */
  private async run(
    jobId: string,
    filter: JobFilter,
    after: Pick<DeadRow, 'micros' | 'id'> | undefined,
  ): Promise<void> {
    try {
      for (;;) {
        if (this.stopping) return await this.letGo(jobId);
        const rows = await this.page(filter, after);
        if (rows.length === 0) break;
        await this.replayPage(jobId, rows);
        after = rows[rows.length - 1];
        await this.checkpoint(jobId, after);
      }
      await this.finish(jobId, 'finished', null);
      this.logger.log(`replay job ${jobId} finished`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.error(`replay job ${jobId} failed: ${message}`);
      await this.finish(jobId, 'failed', message).catch((e: unknown) =>
        this.logger.error(`replay job ${jobId} could not be marked failed: ${String(e)}`),
      );
    }
  }

  private async page(
    filter: JobFilter,
    after: Pick<DeadRow, 'micros' | 'id'> | undefined,
  ): Promise<DeadRow[]> {
    const params = [...filterParams(filter), after?.micros ?? null, after?.id ?? null];
    return this.dataSource.query(
      `SELECT "id", "first_attempt_at", "dead_partition", "dead_offset",
          (extract(epoch FROM "first_attempt_at") * 1000000)::bigint::text AS "micros"
        FROM "delivery_ledger"
        WHERE ${FILTER_SQL} AND ($7::text IS NULL OR ("first_attempt_at", "id") >
          (TIMESTAMPTZ 'epoch' + $7::bigint * INTERVAL '1 microsecond', $8::uuid))
        ORDER BY "first_attempt_at", "id" LIMIT ${this.options.pageRows}`,
      params,
    );
  }

  /** Reads a page's dead letters and replays them as they come, counting progress. */
  private async replayPage(jobId: string, rows: readonly DeadRow[]): Promise<void> {
    const at = (partition: number, offset: string) => `${partition}:${offset}`;
    const byPosition = new Map(rows.map((r) => [at(r.dead_partition, String(r.dead_offset)), r]));
    const positions = rows.map((r) => ({
      partition: r.dead_partition,
      offset: String(r.dead_offset),
    }));
    const summary = await this.reader.read(TOPIC.deliveriesDead, positions, async (records) => {
      const { replays, mismatched } = matchRows(records, (r) =>
        byPosition.get(at(r.partition, r.offset)),
      );
      const ids = await this.replayer.produce(replays, 'bulk');
      await this.replayer.count(
        replays.map((r) => r.target),
        ids,
      );
      await this.progress(jobId, replays.length, mismatched);
    });
    if (summary.missing.length > 0) {
      this.logger.warn(`replay job ${jobId}: ${summary.missing.length} dead letters gone`);
      await this.progress(jobId, 0, summary.missing.length);
    }
  }

  private async progress(jobId: string, replayed: number, failed: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "replayed" = "replayed" + $2, "failed" = "failed" + $3
        WHERE "id" = $1`,
      [jobId, replayed, failed],
    );
  }

  /** Records where the job stands after a finished page, with its counts then. */
  private async checkpoint(jobId: string, last: Pick<DeadRow, 'micros' | 'id'>): Promise<void> {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "checkpoint" = jsonb_build_object('micros', $2::text,
          'id', $3::text, 'replayed', "replayed", 'failed', "failed")
        WHERE "id" = $1`,
      [jobId, last.micros, last.id],
    );
  }

  /** Leaves a job for the next instance to take up at once. */
  private async letGo(jobId: string): Promise<void> {
    await this.dataSource.query(`UPDATE "replay_job" SET "heartbeat_at" = NULL WHERE "id" = $1`, [
      jobId,
    ]);
    this.logger.log(`replay job ${jobId} let go at a page's end: the app is stopping`);
  }

  private async finish(jobId: string, status: 'finished' | 'failed', error: string | null) {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "status" = $2, "error" = $3, "finished_at" = $4 WHERE "id" = $1`,
      [jobId, status, error, new Date(this.clock.now())],
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

/**
 * The replays of dead letters read at the rows' positions; a dead letter that is another
 * delivery's than its row says (a stale pointer) is not replayed but counted.
 */
function matchRows(
  records: readonly IncomingRecord[],
  rowAt: (record: IncomingRecord) => DeadRow | undefined,
): { replays: Replay[]; mismatched: number } {
  const replays: Replay[] = [];
  let mismatched = 0;
  for (const dead of records) {
    const row = rowAt(dead);
    const deadId = deadLetterDeliveryId(dead);
    if (!row || (deadId !== undefined && deadId !== row.id)) {
      mismatched += 1;
      continue;
    }
    replays.push({ dead, target: { id: row.id, firstAttemptAt: row.first_attempt_at } });
  }
  return { replays, mismatched };
}
