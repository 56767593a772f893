import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { KafkaTransport } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';

import { AppModule, routerGroupId } from './app.module';
import { RouterConfig, loadRouterConfig } from './config';
import { CallsConsumer } from './routing/calls.consumer';

/** Pause of a partition after Kafka refused a delivery, before the call is tried again. */
const FAILURE_BACKOFF_MS = 1_000;

/** Creates and starts the router app: the consumer of `sluice.calls.v1`, health and metrics. */
export async function startRouter(
  config: RouterConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  const transport = new KafkaTransport({
    ...transportSettings(app, config),
    groupId: routerGroupId(config),
    partitionsConcurrently: config.router.partitionsConcurrently,
    maxInFlightPerPartition: config.router.maxInFlightPerPartition,
    failureBackoffMs: FAILURE_BACKOFF_MS,
  });
  app.get(CallsConsumer).register(transport);
  app.connectMicroservice({ strategy: transport });
  await listen(app, config);
  return app;
}

if (require.main === module) runMain(loadRouterConfig, (config) => startRouter(config));
