import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';

import { UsageCounter } from './usage.counter';

/** Flushes the usage counter on a timer and once more before shutdown. */
@Injectable()
export class UsageFlusher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly counter: UsageCounter,
    private readonly intervalMs: number,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.counter.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Before the database pool closes (that happens in onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.counter.flush();
  }
}
