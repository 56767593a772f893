import { INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

import { IncomingRecord, KafkaConnection, KafkaTransport, KafkaTransportOptions } from '@app/kafka';

/** Logical topic the Kafka integration tests consume (each test has its own prefix). */
export const TEST_TOPIC = 'it.records.v1';

/** What a test's handler does with each record; set per test. */
export type RecordHandler = (record: IncomingRecord) => Promise<void> | void;

@Module({})
class TestConsumerModule {}

/**
 * Starts a Nest microservice whose handler of TEST_TOPIC calls `handler`, through the
 * project's transport, registered as the apps register theirs.
 */
export async function startConsumerApp(
  connection: KafkaConnection,
  groupId: string,
  handler: RecordHandler,
  overrides: Partial<KafkaTransportOptions> = {},
): Promise<INestMicroservice> {
  const strategy = new KafkaTransport({
    connection,
    groupId,
    partitionsConcurrently: 2,
    maxInFlightPerPartition: 4,
    failureBackoffMs: 200,
    sessionTimeoutMs: 10_000,
    ...overrides,
  });
  strategy.consume(TEST_TOPIC, async (record) => {
    await handler(record);
  });
  const app = await NestFactory.createMicroservice(TestConsumerModule, {
    strategy,
    logger: ['error'],
  });
  await app.listen();
  return app;
}
