import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { MAX_REQUEST_BYTES } from '@app/contracts';
import { connectConsumers } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';
import { SettingsCache } from '@app/settings';
import { startTracing, tracerOf } from '@app/tracing';

import { AppModule } from './app.module';
import { IngestConfig, loadIngestConfig } from './config';
import { ingestKafka } from './kafka-topology';
import { IngestMetrics } from './tracking/ingest.metrics';
import { registerTrackingRoutes } from './tracking/tracking.routes';
import { TrackingService } from './tracking/tracking.service';

/**
 * Compressed bodies are read up to this size; the limit on the inflated body
 * (MAX_REQUEST_BYTES) is checked while inflating. Incompressible data grows a little in gzip.
 */
const MAX_RAW_BODY_BYTES = MAX_REQUEST_BYTES + 64 * 1024;

/** Creates and starts the ingest app: the tracking API and the Kafka ingress consumer. */
export async function startIngest(
  config: IngestConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  // Before the app: its services read their tracer when they are made.
  await startTracing(config.app, config.tracing);
  const app = await createHttpApp(AppModule.forRoot(config), config, {
    ...options,
    bodyLimitBytes: MAX_RAW_BODY_BYTES,
    trustedProxies: config.ingest.trustedProxies,
    // docs/api.md: an oversize request is a 400 like every other refused body.
    errorOverrides: { 413: { status: 400, code: 'request_too_large' } },
  });
  readBodiesAsBytes(app);
  connectConsumers(app, ingestKafka(config), transportSettings(app, config));
  // After init, so that the routes share the error handler Nest installs then.
  await app.init();
  registerTrackingRoutes(app.getHttpAdapter().getInstance(), {
    tracking: app.get(TrackingService),
    metrics: app.get(IngestMetrics),
    settings: app.get(SettingsCache),
    publicUrl: config.ingest.publicUrl,
    tracer: tracerOf(config.app),
  });
  await listen(app, config);
  return app;
}

/**
 * Every body reaches the tracking API as raw bytes, whatever its Content-Type: the route
 * answers 415 itself for a type that is not JSON (docs/api.md), and the service inflates the
 * body (bounded) and parses it once.
 */
function readBodiesAsBytes(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  app.useBodyParser('*', { bodyLimit: MAX_RAW_BODY_BYTES });
}

if (require.main === module) runMain('ingest', loadIngestConfig, (config) => startIngest(config));
