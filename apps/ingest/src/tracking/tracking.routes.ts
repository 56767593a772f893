import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { CALL_TYPES, CallType } from '@app/contracts';

import { IngestError } from './ingest.error';
import { IngestMetrics } from './ingest.metrics';
import { Route, TrackingService } from './tracking.service';
import { writeKeyFromBasic } from './write-key';

/** The routes of the tracking API under `/v1`; `import` is the older name of `batch`. */
export const TRACKING_ROUTES: Readonly<Record<string, Route>> = {
  ...Object.fromEntries(CALL_TYPES.map((type: CallType) => [type, type])),
  batch: 'batch',
  import: 'batch',
};

const PATH = '/v1/:route';
const JSON_TYPE = 'application/json; charset=utf-8';
const SUCCESS = '{"success":true}';

type TrackingRequest = FastifyRequest<{ Params: { route: string } }>;

/**
 * `POST /v1/track|page|screen|identify|group|alias|batch|import`: 200 `{"success":true}` once
 * Kafka acknowledged every accepted call (a batch's refused messages are listed in
 * `rejected`); otherwise `{ code, message }` with 400, 401, 404, 415 or 503.
 *
 * The one hot path of the app, so it is a Fastify route rather than a Nest controller:
 * Nest's router (its guards, pipes, interceptors and response handling, none of which this
 * route uses) would take a large share of a request's budget (docs/performance.md). Register
 * it after `app.init()`: it then shares the app's error handler (Nest's, with the JSON error
 * filter), which answers a body too large or anything unexpected.
 */
export function registerTrackingRoutes(
  fastify: FastifyInstance,
  tracking: TrackingService,
  metrics: IngestMetrics,
): void {
  fastify.post(PATH, async (request: TrackingRequest, reply: FastifyReply) => {
    void reply.header('content-type', JSON_TYPE);
    const name = request.params.route;
    const route = Object.hasOwn(TRACKING_ROUTES, name) ? TRACKING_ROUTES[name] : undefined;
    if (!route) {
      void reply.status(404);
      return errorBody('not_found', `no tracking route /v1/${name.slice(0, 32)}`);
    }
    const authorization = request.headers.authorization;
    try {
      const rejected = await tracking.take({
        route,
        body: request.body as Buffer | undefined,
        contentEncoding: request.headers['content-encoding'],
        writeKey: authorization ? (writeKeyFromBasic(authorization) ?? '') : undefined,
        ip: request.ip,
        channel: 'http',
      });
      return rejected.length === 0 ? SUCCESS : JSON.stringify({ success: true, rejected });
    } catch (error) {
      if (!(error instanceof IngestError)) throw error;
      // A request refused as a whole counts as one refused call; Kafka failing is not a refusal.
      if (error.code !== 'kafka_unavailable') metrics.callRejected(error.code, 'http');
      void reply.status(error.status);
      return errorBody(error.code, error.message);
    }
  });
  // Requests by route and status, counted once the answer is sent (errors included).
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.url.startsWith('/v1/')) {
      const name = request.url.slice(4).split(/[/?]/, 1)[0];
      metrics.request(Object.hasOwn(TRACKING_ROUTES, name) ? name : 'other', reply.statusCode);
    }
    done();
  });
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ code, message });
}
