import {
  BadRequestException,
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
} from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';

import { TOPIC } from '@app/contracts';
import { IncomingRecord, RecordReader } from '@app/kafka';
import { DestinationEntity, SourceEntity } from '@app/settings';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
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
}

/** Dead letters a job reads from Kafka at once: one consumer group join each. */
export const REPLAY_PAGE_ROWS = 5_000;

/** Injection token of the {@link ReplayJobsOptions}. */
export const REPLAY_JOBS_OPTIONS = Symbol('REPLAY_JOBS_OPTIONS');

/** What a job replays: a destination's dead rows, by first attempt, dead when it began. */
interface JobFilter {
  readonly destinationId: string;
  readonly from: Date;
  readonly to: Date;
  readonly reason: string | undefined;
  /** Rows whose last outcome came later (replays that died again among them) are left out. */
  readonly deadBy: Date;
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
  AND ($5::text IS NULL OR "reason" = $5)`;

/**
 * Bulk replays: every dead delivery of a destination in a range of first attempts (and with
 * a reason), replayed in the background a page at a time, the job row counting progress.
 * Each row is replayed once: pages follow the rows' order (first attempt, id) without
 * overlap, and rows dead after the job began are not part of it.
 */
@Injectable()
export class ReplayJobsService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ReplayJobsService.name);
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly reader: RecordReader,
    private readonly replayer: Replayer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(REPLAY_JOBS_OPTIONS) private readonly options: ReplayJobsOptions,
  ) {}

  /** Creates the job (with the count it covers) and starts it; 404s, 409 when disabled. */
  async start(sourceId: string, dto: ReplayRangeDto): Promise<ReplayJobView> {
    const destination = await this.destinationOf(sourceId);
    await this.replayer.assertDestinationEnabled(destination.id);
    const filter = this.filter(destination.id, dto);
    const [{ count }]: { count: string }[] = await this.dataSource.query(
      `SELECT count(*) AS "count" FROM "delivery_ledger" WHERE ${FILTER_SQL}`,
      filterParams(filter),
    );
    const total = Number(count);
    const [job]: ReplayJobRecord[] = await this.dataSource.query(
      `INSERT INTO "replay_job" ("id", "destination_id", "filter", "status", "total",
         "created_at", "finished_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        this.clock.newId(),
        destination.id,
        JSON.stringify({ from: filter.from, to: filter.to, reason: filter.reason ?? null }),
        total === 0 ? 'finished' : 'running',
        total,
        filter.deadBy,
        total === 0 ? filter.deadBy : null,
      ],
    );
    if (total > 0) this.track(this.run(job.id, filter));
    this.logger.log(`replay job ${job.id} of destination ${destination.id}: ${total} dead letters`);
    return replayJobView(job);
  }

  async get(id: string): Promise<ReplayJobView> {
    const rows: ReplayJobRecord[] = await this.dataSource.query(
      `SELECT * FROM "replay_job" WHERE "id" = $1`,
      [id],
    );
    if (rows.length === 0) throw notFound('replay');
    return replayJobView(rows[0]);
  }

  /** Jobs in progress stop at their next page (marked failed); waits for them. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  private async destinationOf(sourceId: string): Promise<DestinationEntity> {
    const source = isUUID(sourceId)
      ? await this.dataSource.getRepository(SourceEntity).findOneBy({ id: sourceId })
      : null;
    if (!source) throw notFound('source');
    const destination = await this.dataSource
      .getRepository(DestinationEntity)
      .findOneBy({ sourceId });
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
    return { destinationId, from, to, reason: dto.reason, deadBy: new Date(this.clock.now()) };
  }

  private track(job: Promise<void>): void {
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }

  /** Replays page after page; the job ends finished, or failed with the reason. */
  private async run(jobId: string, filter: JobFilter): Promise<void> {
    try {
      let after: DeadRow | undefined;
      for (;;) {
        const rows = await this.page(filter, after);
        if (rows.length === 0) break;
        await this.replayPage(jobId, rows);
        after = rows[rows.length - 1];
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

  private async page(filter: JobFilter, after: DeadRow | undefined): Promise<DeadRow[]> {
    const params = [...filterParams(filter), after?.micros ?? null, after?.id ?? null];
    return this.dataSource.query(
      `SELECT "id", "first_attempt_at", "dead_partition", "dead_offset",
          (extract(epoch FROM "first_attempt_at") * 1000000)::bigint::text AS "micros"
        FROM "delivery_ledger"
        WHERE ${FILTER_SQL} AND ($6::text IS NULL OR ("first_attempt_at", "id") >
          (TIMESTAMPTZ 'epoch' + $6::bigint * INTERVAL '1 microsecond', $7::uuid))
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
      if (this.stopping) throw new Error('the admin app stopped before the job finished');
      const { replays, mismatched } = matchRows(records, (r) =>
        byPosition.get(at(r.partition, r.offset)),
      );
      await this.replayer.produce(replays, 'bulk');
      await this.replayer.count(replays.map((r) => r.target));
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

  private async finish(jobId: string, status: 'finished' | 'failed', error: string | null) {
    await this.dataSource.query(
      `UPDATE "replay_job" SET "status" = $2, "error" = $3, "finished_at" = $4 WHERE "id" = $1`,
      [jobId, status, error, new Date(this.clock.now())],
    );
  }
}

function filterParams(filter: JobFilter): unknown[] {
  return [filter.destinationId, filter.from, filter.to, filter.deadBy, filter.reason ?? null];
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
