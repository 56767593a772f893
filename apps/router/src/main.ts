import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { connectConsumers } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';
import { startTracing } from '@app/tracing';

import { AppModule } from './app.module';
import { RouterConfig, loadRouterConfig } from './config';
import { routerKafka } from './kafka-topology';

/** Creates and starts the router app: the consumer of `sluice.calls.v1`, health and metrics. */
export async function startRouter(
  config: RouterConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  // Before the app: its services read their tracer when they are made.
  await startTracing(config.app, config.tracing);
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  connectConsumers(app, routerKafka(config), transportSettings(app, config));
  await listen(app, config);
  return app;
}

if (require.main === module) runMain('router', loadRouterConfig, (config) => startRouter(config));
