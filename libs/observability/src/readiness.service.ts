import { Inject, Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';

import { HEALTH_CHECKS, HealthCheck, Readiness, readiness } from './health';
import { Metrics } from './metrics';

/** How long one readiness check may take. */
const CHECK_TIMEOUT_MS = 3_000;

/**
 * Runs the app's health checks for `/health/ready` and for the metrics `sluice_ready` and
 * `sluice_dependency_up{dependency}`, which a scrape evaluates afresh. Calls that overlap share
 * one run of the checks.
 */
@Injectable()
export class ReadinessService {
  private readonly logger = new Logger('Health');
  private running?: Promise<Readiness>;
  /** The checks down at the last run: a check is logged when it goes down and comes back. */
  private down = new Set<string>();

  constructor(
    @Inject(HEALTH_CHECKS) private readonly checks: HealthCheck[],
    metrics: Metrics,
  ) {
    const evaluate = () => this.evaluate();
    new Gauge({
      name: 'sluice_ready',
      help: 'Whether the app can do its job now (1) or not (0), as /health/ready answers',
      registers: [metrics.registry],
      async collect(this: Gauge) {
        this.set((await evaluate()).ready ? 1 : 0);
      },
    });
    new Gauge({
      name: 'sluice_dependency_up',
      help: 'Whether each readiness check passed (1) or not (0), required or not',
      labelNames: ['dependency'],
      registers: [metrics.registry],
      async collect(this: Gauge<'dependency'>) {
        const { checks } = await evaluate();
        for (const [dependency, status] of Object.entries(checks)) {
          this.set({ dependency }, status === 'up' ? 1 : 0);
        }
      },
    });
  }

  /** Runs every check (or joins the run under way). Failure reasons go to the log only. */
  evaluate(): Promise<Readiness> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<Readiness> {
    const reasons = new Map<string, string>();
    const result = await readiness(this.checks, CHECK_TIMEOUT_MS, (name, error) =>
      reasons.set(name, error instanceof Error ? error.message : 'error'),
    );
    for (const [name, reason] of reasons) {
      if (!this.down.has(name)) this.logger.warn(`readiness check ${name} failed: ${reason}`);
    }
    for (const name of this.down) {
      if (!reasons.has(name)) this.logger.log(`readiness check ${name} passes again`);
    }
    this.down = new Set(reasons.keys());
    return result;
  }
}
