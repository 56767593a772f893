import { HEADER, retryTopic, TOPIC } from '@app/contracts';
import { defineKafkaTopology, KafkaTopology } from '@app/kafka';

import { DispatcherConfig, retryTiers } from './config';
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
 * How long the dispatcher's producer gathers records before a request. It produces retries,
 * dead letters and outcomes one at a time; a destination that fails or hangs sends hundreds a
 * second to the retry tier, and a request per one or two of them cost that traffic more CPU
 * than the deliveries of the healthy destinations beside it (bench/DISPATCHER.md, (b)).
 * Retries wait 10 s or more anyway; nobody waits on a dead letter or an outcome by the
 * millisecond.
 */
const PRODUCE_LINGER_MS = 10;

/**
 * The dispatcher's Kafka: one consumer group for `sluice.deliveries.v1` and another for the
 * retry tiers (one topic per distinct delay), so that slow retries never take the main
 * topic's turns; both report their lag (KEDA scales on the main group's). `main.ts`, the
 * module and the test harnesses read it.
 */
export function dispatcherKafka(config: DispatcherConfig): KafkaTopology<'main' | 'retries'> {
  const { dispatcher } = config;
  const tuning = {
    partitionsConcurrently: dispatcher.partitionsConcurrently,
    maxInFlightPerPartition: dispatcher.maxInFlightPerPartition,
    failureBackoffMs: FAILURE_BACKOFF_MS,
    maxBytesPerPartition: dispatcher.maxInFlightPerPartition * FETCH_BYTES_PER_SLOT,
  };
  const tiers = retryTiers(config).map(retryTopic);
  return defineKafkaTopology({
    prefix: config.kafka.topicPrefix,
    consumers: {
      main: {
        group: 'sluice-dispatcher',
        topics: [TOPIC.deliveries],
        handler: DeliveriesConsumer,
        tuning,
        reportLag: true,
      },
      retries: {
        group: 'sluice-dispatcher-retry',
        topics: tiers,
        handler: DeliveriesConsumer,
        // A tier has one delay, so its records come due in order: pause until the head is due.
        tuning: { ...tuning, dueAtHeader: HEADER.dueAt },
        reportLag: true,
      },
    },
    extraTopics: tiers,
    producer: { lingerMs: PRODUCE_LINGER_MS },
  });
}
