import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { HEADER, retryTopic, TOPIC } from '@app/contracts';
import { KafkaTransport } from '@app/kafka';
import { createHttpApp, HttpAppOptions, listen, runMain, transportSettings } from '@app/runtime';

import { AppModule, dispatcherGroupIds } from './app.module';
import { DispatcherConfig, loadDispatcherConfig, retryTiers } from './config';
import { DeliveriesConsumer } from './delivery/deliveries.consumer';

/** Pause of a partition after Kafka refused a retry or dead record, before trying again. */
const FAILURE_BACKOFF_MS = 1_000;

/**
 * A fetch brings of a partition about what its slots (`DISPATCHER_MAX_IN_FLIGHT_PER_PARTITION`)
 * hold of deliveries of a kilobyte: 128 KiB by default. kafkajs's 1 MiB decoded thousands of
 * records at once, which then waited for slots, outlived young-generation collections and
 * held the next fetch back (bench/DISPATCHER.md, "Where the dispatcher's CPU goes").
 */
const FETCH_BYTES_PER_SLOT = 1024;

/**
 * Creates and starts the dispatcher app: one consumer group for `sluice.deliveries.v1` and
 * another for the retry tiers, so that slow retries never take the main topic's turns.
 */
export async function startDispatcher(
  config: DispatcherConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const app = await createHttpApp(AppModule.forRoot(config), config, options);
  const settings = transportSettings(app, config);
  const { dispatcher } = config;
  const groups = dispatcherGroupIds(config);
  const common = {
    ...settings,
    partitionsConcurrently: dispatcher.partitionsConcurrently,
    maxInFlightPerPartition: dispatcher.maxInFlightPerPartition,
    failureBackoffMs: FAILURE_BACKOFF_MS,
    maxBytesPerPartition: dispatcher.maxInFlightPerPartition * FETCH_BYTES_PER_SLOT,
  };
  const main = new KafkaTransport({ ...common, groupId: groups.main, topics: [TOPIC.deliveries] });
  const tiers = retryTiers(config).map(retryTopic);
  const retries = new KafkaTransport({
    ...common,
    groupId: groups.retries,
    topics: tiers,
    // A tier has one delay, so its records come due in order: pause until the head is due.
    dueAtHeader: HEADER.dueAt,
  });
  app.get(DeliveriesConsumer).register(main, retries, tiers);
  app.connectMicroservice({ strategy: main });
  app.connectMicroservice({ strategy: retries });
  await listen(app, config);
  return app;
}

if (require.main === module) runMain(loadDispatcherConfig, (config) => startDispatcher(config));
