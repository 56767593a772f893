import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { connectConsumers } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';
import { startTracing } from '@app/tracing';

import { AppModule } from './app.module';
import { DispatcherConfig, loadDispatcherConfig } from './config';
import { dispatcherKafka } from './kafka-topology';

/**
 * Creates and starts the dispatcher app: one consumer group for `sluice.deliveries.v1` and
 * another for the retry tiers, so that slow retries never take the main topic's turns.
 */
export async function startDispatcher(
  config: DispatcherConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  // Before the app: its services read their tracer when they are made.
  await startTracing(config.app, config.tracing);
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  connectConsumers(app, dispatcherKafka(config), transportSettings(app, config));
  await listen(app, config);
  return app;
}

if (require.main === module)
  runMain('dispatcher', loadDispatcherConfig, (config) => startDispatcher(config));
