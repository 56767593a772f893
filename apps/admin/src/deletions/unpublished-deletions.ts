import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';

import { Clock, CLOCK } from '../clock';
import { DeletionsService } from './deletions.service';

/** How often requests left unpublished are looked for (and once at start). */
const CHECK_EVERY_MS = 60_000;

/** Options of {@link UnpublishedDeletions}. */
export interface UnpublishedDeletionsOptions {
  /**
   * How old an unpublished request must be before it is published again: far longer than a
   * request's own publishing may take, so that a request being made now is never taken.
   */
  readonly afterMs: number;
}

/** Injection token of the {@link UnpublishedDeletionsOptions}. */
export const UNPUBLISHED_DELETIONS_OPTIONS = Symbol('UNPUBLISHED_DELETIONS_OPTIONS');

/**
 * The age at which an unpublished request is published again, for sends that time out after
 * `produceTimeoutMs`: ten minutes, or three of those timeouts when that is longer (a request
 * whose first send times out gives up after about one).
 */
export function republishAfterMs(produceTimeoutMs: number): number {
  return Math.max(10 * 60_000, 3 * produceTimeoutMs);
}

/**
 * Publishes deletion requests that were stored but never marked published (the app stopped
 * in between), at start and every minute, so that none stays pending for good.
 */
@Injectable()
export class UnpublishedDeletions implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(UnpublishedDeletions.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly deletions: DeletionsService,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(UNPUBLISHED_DELETIONS_OPTIONS) private readonly options: UnpublishedDeletionsOptions,
  ) {}

  onApplicationBootstrap(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  /** Before the producer and the database pool close. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Publishes the requests unpublished for longer than `afterMs` (one check at a time); a
   * failure is logged, and the next check tries again.
   * @returns how many requests were published
   */
  check(): Promise<number> {
    this.running ??= this.deletions
      .publishUnpublished(new Date(this.clock.now() - this.options.afterMs))
      .catch((error: unknown) => {
        this.logger.warn(`publishing unpublished deletion requests failed: ${String(error)}`);
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
