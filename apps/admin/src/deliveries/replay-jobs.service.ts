import {
  BadRequestException,
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { isUUID } from 'class-validator';

import { TOPIC } from '@app/contracts';
import { IncomingRecord, RecordReader } from '@app/kafka';
import { DestinationEntity } from '@app/settings';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { FIRST_DESTINATION } from '../destinations/destinations.service';
import { ReplayRangeDto } from './delivery.dto';
import { ReplayJobView, replayJobView } from './delivery.view';
import { DeadRow, JobFilter, PageKey, ReplayJobsRepository } from './replay-jobs.repository';
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
    private readonly jobs: ReplayJobsRepository,
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
    const total = await this.jobs.count(filter);
    const job = await this.jobs.insert({ id: this.clock.newId(), filter, total });
    if (total > 0) this.track(job.id, this.run(job.id, filter, undefined));
    this.logger.log(`replay job ${job.id} of destination ${destination.id}: ${total} dead letters`);
    return replayJobView(job);
  }

  /** The latest jobs, newest first; those of one destination when it is given. */
  async list(destinationId: string | undefined, limit: number): Promise<ReplayJobView[]> {
    const rows = await this.jobs.latest(destinationId, limit);
    return rows.map(replayJobView);
  }

  async get(id: string): Promise<ReplayJobView> {
    const job = await this.jobs.findById(id);
    if (!job) throw notFound('replay');
    return replayJobView(job);
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
    const rows = await this.jobs.claimLeftBehind(
      new Date(now),
      new Date(now - this.options.staleAfterMs),
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
      if (this.owned.size > 0) await this.jobs.beat([...this.owned], new Date(this.clock.now()));
      await this.resumeLeftBehind();
    } catch (error) {
      this.logger.warn(`replay job heartbeat failed: ${String(error)}`);
    }
  }

  /** The destination by id, or the source's first (oldest) one. */
  private async destinationOf(sourceId: string, destinationId: string): Promise<DestinationEntity> {
    if (!isUUID(sourceId)) throw notFound('source');
    const first = destinationId === FIRST_DESTINATION;
    const found = await this.jobs.destinationOf(sourceId, first ? undefined : destinationId);
    if (found.kind === 'no_source') throw notFound('source');
    if (found.kind === 'no_destination') throw notFound('destination');
    return found.destination;
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
  private async run(jobId: string, filter: JobFilter, after: PageKey | undefined): Promise<void> {
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

  private page(filter: JobFilter, after: PageKey | undefined): Promise<DeadRow[]> {
    return this.jobs.page(filter, after, this.options.pageRows);
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

  private progress(jobId: string, replayed: number, failed: number): Promise<void> {
    return this.jobs.progress(jobId, replayed, failed);
  }

  /** Records where the job stands after a finished page, with its counts then. */
  private checkpoint(jobId: string, last: PageKey): Promise<void> {
    return this.jobs.checkpoint(jobId, last);
  }

  /** Leaves a job for the next instance to take up at once. */
  private async letGo(jobId: string): Promise<void> {
    await this.jobs.letGo(jobId);
    this.logger.log(`replay job ${jobId} let go at a page's end: the app is stopping`);
  }

  private finish(jobId: string, status: 'finished' | 'failed', error: string | null) {
    return this.jobs.finish(jobId, status, error, new Date(this.clock.now()));
  }
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
