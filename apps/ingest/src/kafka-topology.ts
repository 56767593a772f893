import { TOPIC } from '@app/contracts';
import { defineKafkaTopology, KafkaTopology } from '@app/kafka';

import { IngestConfig } from './config';
import { IngressConsumer } from './kafka-ingress/ingress.consumer';

/**
 * Produce requests in flight at once. With one, a request that arrived while one was in
 * flight waited for it and then for its own, and ingest sat idle part of the time under load
 * (bench/README.md, "Where ingest's time goes"). Concurrent HTTP requests have no order to
 * keep; a client that waits for one answer before its next call still has its calls stored
 * in order.
 */
export const PRODUCE_REQUESTS_IN_FLIGHT = 2;

/** Pause of a partition after a call of the Kafka ingress could not be stored. */
const FAILURE_BACKOFF_MS = 1_000;

/**
 * Ingest's Kafka: the producer of accepted calls, and one consumer group on
 * `sluice.ingest.v1` (the Kafka ingress). `main.ts`, the module and the test harnesses read it.
 */
export function ingestKafka(config: IngestConfig): KafkaTopology<'ingress'> {
  return defineKafkaTopology({
    prefix: config.kafka.topicPrefix,
    consumers: {
      ingress: {
        group: 'sluice-ingest',
        topics: [TOPIC.ingest],
        handler: IngressConsumer,
        tuning: {
          partitionsConcurrently: config.ingest.ingressPartitionsConcurrently,
          maxInFlightPerPartition: config.ingest.ingressMaxInFlight,
          failureBackoffMs: FAILURE_BACKOFF_MS,
        },
        reportLag: false,
      },
    },
    producer: {
      sendTimeoutMs: config.ingest.produceTimeoutMs,
      requestsInFlight: PRODUCE_REQUESTS_IN_FLIGHT,
      lingerMs: config.ingest.produceLingerMs,
    },
  });
}
