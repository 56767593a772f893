import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';

import { SyncsService } from './audiences/syncs.service';
import { Clock, CLOCK } from './clock';
import { DeletionsService } from './deletions/deletions.service';

/** How often housekeeping runs (and once at start). */
const EVERY_MS = 60_000;

/** An open audience or computed-trait sync not committed within this long is dropped. */
export const SYNC_EXPIRY_MS = 24 * 60 * 60_000;

/** Options of {@link Housekeeping}. */
export interface HousekeepingOptions {
  /**
   * How old a deletion request never marked published must be before it is published again:
   * far longer than a request's own publishing may take, so that one being made now is never
   * taken.
   */
  readonly republishAfterMs: number;
  /** How old an open sync must be before it is dropped. */
  readonly syncExpiryMs: number;
}

/** Injection token of the {@link HousekeepingOptions}. */
export const HOUSEKEEPING_OPTIONS = Symbol('HOUSEKEEPING_OPTIONS');

/**
 * The age at which a deletion request never marked published is published again, for sends
 * that time out after `produceTimeoutMs`: ten minutes, or three of those timeouts when that
 * is longer (a request whose first send times out gives up after about one).
 */
export function republishAfterMs(produceTimeoutMs: number): number {
  return Math.max(10 * 60_000, 3 * produceTimeoutMs);
}

/** What one round of housekeeping did. */
export interface HousekeepingRound {
  /** Deletion requests published again. */
  readonly republished: number;
  /** Open syncs dropped. */
  readonly expiredSyncs: number;
}

/**
 * Repairs what a stopped app or an abandoning client leaves behind, at start and every minute:
 * deletion requests stored but never marked published are published (none stays pending for
 * good), and syncs left open are dropped with their pages. One round at a time.
 */
@Injectable()
export class Housekeeping implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Housekeeping.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<HousekeepingRound>;

  constructor(
    private readonly deletions: DeletionsService,
    private readonly syncs: SyncsService,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(HOUSEKEEPING_OPTIONS) private readonly options: HousekeepingOptions,
  ) {}

  onApplicationBootstrap(): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), EVERY_MS);
    this.timer.unref();
  }

  /** Before the producer and the database pool close. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * One round, or the one already running; a task that fails is logged and counts 0, and
   * the next round tries again.
   */
  run(): Promise<HousekeepingRound> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<HousekeepingRound> {
    const now = this.clock.now();
    const republished = await this.safely('publishing unpublished deletion requests', () =>
      this.deletions.publishUnpublished(new Date(now - this.options.republishAfterMs)),
    );
    const expiredSyncs = await this.safely('expiring open syncs', () =>
      this.syncs.expireOpen(new Date(now - this.options.syncExpiryMs)),
    );
    return { republished, expiredSyncs };
  }

  private async safely(what: string, task: () => Promise<number>): Promise<number> {
    try {
      return await task();
    } catch (error) {
      this.logger.warn(`${what} failed: ${String(error)}`);
      return 0;
    }
  }
}
