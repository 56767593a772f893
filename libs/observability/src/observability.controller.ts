import { Controller, Get, Header, HttpStatus, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { Metrics } from './metrics';
import { ReadinessService } from './readiness.service';

/** `GET /health/live`, `GET /health/ready` and `GET /metrics`, in every app. */
@Controller()
export class ObservabilityController {
  constructor(
    private readonly readiness: ReadinessService,
    private readonly metrics: Metrics,
  ) {}

  /** The process runs and its event loop answers. */
  @Get('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * 200 when every required check passed (status `ok`, or `degraded` when one that is not
   * required failed), else 503 `unavailable`; each lists every check.
   */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const result = await this.readiness.evaluate();
    reply.status(result.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    const status = !result.ready ? 'unavailable' : result.degraded ? 'degraded' : 'ok';
    return { status, checks: result.checks };
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.text();
    reply.header('Content-Type', contentType);
    return body;
  }
}
