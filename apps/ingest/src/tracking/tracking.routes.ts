import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';

import { CALL_TYPES, CallType } from '@app/contracts';
import type { SettingsCache } from '@app/settings';
import type { Span, Tracer } from '@app/tracing';

import { corsHeaders, ORIGIN_NOT_ALLOWED, preflightHeaders, sourceAllowsOrigin } from './cors';
import { IngestError } from './ingest.error';
import { IngestMetrics } from './ingest.metrics';
import { checkMediaType } from './request-body';
import {
  etagMatches,
  PublicAddress,
  publicAddress,
  SETTINGS_MAX_AGE_SECONDS,
  settingsDocument,
} from './settings-document';
import { Route, TrackingService } from './tracking.service';
import { tracedRequest } from './tracking.tracing';
import { writeKeyFromBasic } from './write-key';

/**
 * The routes of the tracking API under `/v1`: each call type's name, `batch` and its older
 * name `import`, and the one-letter names Segment's browser and mobile libraries post to.
 */
export const TRACKING_ROUTES: Readonly<Record<string, Route>> = {
  ...Object.fromEntries(CALL_TYPES.map((type: CallType) => [type, type])),
  batch: 'batch',
  import: 'batch',
  t: 'track',
  i: 'identify',
  p: 'page',
  s: 'screen',
  g: 'group',
  a: 'alias',
  b: 'batch',
};

const PATH = '/v1/:route';
/** analytics-next's own metrics: read and dropped. */
const METRICS_PATH = '/v1/m';
const SETTINGS_PATH = '/v1/projects/:writeKey/settings';
/** The most bytes of a `/v1/m` body read (the library sends at most 20 small metrics). */
const MAX_METRICS_BODY_BYTES = 64 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const SUCCESS = '{"success":true}';

type TrackingRoute = { Params: { route: string } };
type SettingsRoute = { Params: { writeKey: string } };

/** What the tracking routes use. */
export interface TrackingRoutesDeps {
  readonly tracking: TrackingService;
  readonly metrics: IngestMetrics;
  readonly settings: SettingsCache;
  /** INGEST_PUBLIC_URL; empty to tell each settings request its own address. */
  readonly publicUrl: string;
  /** The app's tracer; undefined when traces are off. */
  readonly tracer?: Tracer;
}

/**
 * `POST /v1/track|page|screen|identify|group|alias|batch|import` and `/v1/t|i|p|s|g|a|b`:
 * 200 `{"success":true}` once Kafka acknowledged every accepted call (a batch's refused
 * messages are listed in `rejected`); otherwise `{ code, message }` with 400, 401, 403, 404,
 * 415 or 503. Beside them: CORS preflights, `/v1/m` and the settings document.
 *
 * The one hot path of the app, so these are Fastify routes rather than a Nest controller:
 * Nest's router (its guards, pipes, interceptors and response handling, none of which these
 * routes use) would take a large share of a request's budget (docs/performance.md). Register
 * them after `app.init()`: they then share the app's error handler (Nest's, with the JSON
 * error filter), which answers a body too large or anything unexpected.
 */
export function registerTrackingRoutes(fastify: FastifyInstance, deps: TrackingRoutesDeps): void {
  const { tracking, metrics, settings } = deps;
  // Before the body is read, so that even an answer of the error handler is readable.
  const readable: onRequestHookHandler = (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin !== undefined && settings.originAllowedBySomeSource(origin)) {
      void reply.headers(corsHeaders(origin));
    }
    done();
  };
  const track = async (
    request: FastifyRequest<TrackingRoute>,
    reply: FastifyReply,
    span?: Span,
  ) => {
    void reply.header('content-type', JSON_TYPE);
    const name = request.params.route;
    const route = Object.hasOwn(TRACKING_ROUTES, name) ? TRACKING_ROUTES[name] : undefined;
    if (!route) {
      void reply.status(404);
      return errorBody('not_found', `no tracking route /v1/${name.slice(0, 32)}`);
    }
    const authorization = request.headers.authorization;
    try {
      checkMediaType(request.headers['content-type']);
      const rejected = await tracking.take({
        route,
        body: request.body as Buffer | undefined,
        contentEncoding: request.headers['content-encoding'],
        writeKey: authorization ? (writeKeyFromBasic(authorization) ?? '') : undefined,
        ip: request.ip,
        origin: request.headers.origin,
        channel: 'http',
        span,
      });
      return rejected.length === 0 ? SUCCESS : JSON.stringify({ success: true, rejected });
    } catch (error) {
      if (!(error instanceof IngestError)) throw error;
      // A request refused as a whole counts as one refused call; Kafka failing is not a refusal.
      if (error.code !== 'kafka_unavailable') metrics.callRejected(error.code, 'http');
      // The page may not read the answer: its origin is not one of this source's.
      if (error.code === 'origin_not_allowed') reply.removeHeader('access-control-allow-origin');
      void reply.status(error.status);
      return errorBody(error.code, error.message);
    }
  };
  const traced = deps.tracer ? tracedRequest(deps.tracer, TRACKING_ROUTES, track) : track;
  fastify.post<TrackingRoute>(PATH, { onRequest: readable }, traced);
  // Taken and dropped: nothing reads a browser library's metrics about itself.
  fastify.post(
    METRICS_PATH,
    { onRequest: readable, bodyLimit: MAX_METRICS_BODY_BYTES },
    async (_request, reply) => {
      void reply.header('content-type', JSON_TYPE);
      return SUCCESS;
    },
  );
  fastify.options('/v1/*', (request, reply) => preflight(request, reply, settings));
  registerSettingsRoute(fastify, settings, deps.publicUrl);
  // Requests by route and status, counted once the answer is sent (errors included), with
  // the time Fastify measured from routing to the answer's end (milliseconds; no clock read).
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.url.startsWith('/v1/')) {
      const route = routeLabel(request.method, request.url);
      metrics.request(route, reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
}

/**
 * A CORS preflight, which names no source: allowed when some enabled source allows the
 * page's origin; the request itself is then checked against its own source's list.
 */
function preflight(request: FastifyRequest, reply: FastifyReply, settings: SettingsCache): void {
  const origin = request.headers.origin;
  if (origin === undefined) {
    void reply.status(204).header('allow', 'POST, GET, OPTIONS').send();
  } else if (settings.originAllowedBySomeSource(origin)) {
    void reply.status(204).headers(preflightHeaders(origin)).send();
  } else {
    void reply
      .status(403)
      .header('content-type', JSON_TYPE)
      .send(errorBody('origin_not_allowed', ORIGIN_NOT_ALLOWED));
  }
}

/**
 * `GET /v1/projects/:writeKey/settings`: the settings document Segment's browser and mobile
 * libraries fetch before sending (their `cdnURL` or `cdnHost` pointed at ingest), from the
 * settings cache. Cacheable (`max-age`, ETag); 404 for an unknown or disabled write key, 403
 * for a page whose origin the source does not allow.
 */
function registerSettingsRoute(
  fastify: FastifyInstance,
  settings: SettingsCache,
  publicUrl: string,
): void {
  const configured = publicUrl === '' ? undefined : publicAddress(publicUrl);
  fastify.get<SettingsRoute>(SETTINGS_PATH, async (request, reply) => {
    const { writeKey } = request.params;
    const origin = request.headers.origin;
    const source = settings.sourceByWriteKey(writeKey);
    // The answer depends on the Origin: a cache must not hand one page's to another.
    void reply.header('content-type', JSON_TYPE).header('vary', 'Origin');
    if (!source?.enabled || !sourceAllowsOrigin(source, origin)) {
      const refusal = source?.enabled
        ? { status: 403, code: 'origin_not_allowed', message: ORIGIN_NOT_ALLOWED }
        : { status: 404, code: 'not_found', message: 'unknown or disabled write key' };
      if (origin !== undefined && refusal.status === 404) void reply.headers(corsHeaders(origin));
      void reply.status(refusal.status).header('cache-control', 'no-store');
      return errorBody(refusal.code, refusal.message);
    }
    if (origin !== undefined) void reply.headers(corsHeaders(origin));
    const address: PublicAddress = configured ?? {
      apiHost: `${request.host}/v1`,
      protocol: request.protocol,
    };
    const document = settingsDocument(writeKey, address);
    void reply
      .header('cache-control', `public, max-age=${SETTINGS_MAX_AGE_SECONDS}`)
      .header('etag', document.etag);
    if (etagMatches(request.headers['if-none-match'], document.etag)) {
      void reply.status(304);
      return '';
    }
    return document.body;
  });
}

/** The `route` label of a request under `/v1/`: few values, never a write key. */
function routeLabel(method: string, url: string): string {
  if (method === 'OPTIONS') return 'preflight';
  const name = url.slice(4).split(/[/?]/, 1)[0];
  if (Object.hasOwn(TRACKING_ROUTES, name) || name === 'm') return name;
  return name === 'projects' ? 'settings' : 'other';
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ code, message });
}
