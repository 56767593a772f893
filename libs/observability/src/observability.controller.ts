import { Controller, Get, Header, HttpStatus, Inject, Logger, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { HEALTH_CHECKS, HealthCheck, readiness } from './health';
import { Metrics } from './metrics';

/** How long one readiness check may take. */
const CHECK_TIMEOUT_MS = 3_000;

/** `GET /health/live`, `GET /health/ready` and `GET /metrics`, in every app. */
@Controller()
export class ObservabilityController {
  private readonly logger = new Logger('Health');

  constructor(
    @Inject(HEALTH_CHECKS) private readonly checks: HealthCheck[],
    private readonly metrics: Metrics,
  ) {}

  /** The process runs and its event loop answers. */
  @Get('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** 200 when every dependency answered for real, else 503; both list each check. */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const result = await readiness(this.checks, CHECK_TIMEOUT_MS, (name, error) =>
      this.logger.warn(
        `readiness check ${name} failed: ${error instanceof Error ? error.message : 'error'}`,
      ),
    );
    reply.status(result.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return { status: result.ready ? 'ok' : 'unavailable', checks: result.checks };
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.text();
    reply.header('Content-Type', contentType);
    return body;
  }
}
