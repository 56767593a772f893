import { TOPIC } from '@app/contracts';
import { defineKafkaTopology, KafkaTopology } from '@app/kafka';

import { RouterConfig } from './config';
import { CallsConsumer } from './routing/calls.consumer';

/** Pause of a partition after Kafka refused a delivery, before the call is tried again. */
const FAILURE_BACKOFF_MS = 1_000;

/**
 * The router's Kafka: one consumer group on `sluice.calls.v1`, whose lag is what KEDA scales
 * the router on. `main.ts`, the module and the test harnesses read it.
 */
export function routerKafka(config: RouterConfig): KafkaTopology<'calls'> {
  return defineKafkaTopology({
    prefix: config.kafka.topicPrefix,
    consumers: {
      calls: {
        group: 'sluice-router',
        topics: [TOPIC.calls],
        handler: CallsConsumer,
        tuning: {
          partitionsConcurrently: config.router.partitionsConcurrently,
          maxInFlightPerPartition: config.router.maxInFlightPerPartition,
          failureBackoffMs: FAILURE_BACKOFF_MS,
        },
        reportLag: true,
      },
    },
  });
}
