import { Controller, HttpCode, NotFoundException, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { CALL_TYPES, CallType } from '@app/contracts';

import { IngestError } from './ingest.error';
import { RejectedItem, Route, TrackingService } from './tracking.service';
import { writeKeyFromBasic } from './write-key';

/** The routes of the tracking API under `/v1`; `import` is the older name of `batch`. */
export const TRACKING_ROUTES: Readonly<Record<string, Route>> = {
  ...Object.fromEntries(CALL_TYPES.map((type: CallType) => [type, type])),
  batch: 'batch',
  import: 'batch',
};

const SUCCESS = { success: true } as const;

/** `POST /v1/track|page|screen|identify|group|alias|batch|import`. */
@Controller('v1')
export class TrackingController {
  constructor(private readonly tracking: TrackingService) {}

  /**
   * 200 `{"success":true}` once Kafka acknowledged every accepted call (a batch's refused
   * messages are listed in `rejected`); otherwise `{ code, message }` with 400, 401, 415 or 503.
   */
  @Post(':route')
  @HttpCode(200)
  async receive(
    @Param('route') name: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<object> {
    const route = Object.hasOwn(TRACKING_ROUTES, name) ? TRACKING_ROUTES[name] : undefined;
    if (!route) throw new NotFoundException(`no tracking route /v1/${name.slice(0, 32)}`);
    const authorization = request.headers.authorization;
    let rejected: RejectedItem[];
    try {
      rejected = await this.tracking.take({
        route,
        body: request.body as Buffer | undefined,
        contentEncoding: request.headers['content-encoding'],
        writeKey: authorization ? (writeKeyFromBasic(authorization) ?? '') : undefined,
        ip: request.ip,
        channel: 'http',
      });
    } catch (error) {
      if (!(error instanceof IngestError)) throw error;
      reply.status(error.status);
      return { code: error.code, message: error.message };
    }
    return rejected.length === 0 ? SUCCESS : { ...SUCCESS, rejected };
  }
}
