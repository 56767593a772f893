import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';

import { IncomingRecord, KafkaConnection, KafkaTransport, KafkaTransportOptions } from '@app/kafka';

/** Logical topic the Kafka integration tests consume (each test has its own prefix). */
export const TEST_TOPIC = 'it.records.v1';

/** What a test's handler does with each record; set per test. */
export type RecordHandler = (record: IncomingRecord) => Promise<void> | void;

let current: RecordHandler = () => undefined;

@Controller()
class TestRecordsConsumer {
  @EventPattern(TEST_TOPIC)
  async handle(@Payload() record: IncomingRecord): Promise<void> {
    await current(record);
  }
}

@Module({ controllers: [TestRecordsConsumer] })
class TestConsumerModule {}

/**
 * Starts a Nest microservice whose @EventPattern handler calls `handler`, through the
 * project's transport. One at a time per test file (the handler is module state).
 */
export async function startConsumerApp(
  connection: KafkaConnection,
  groupId: string,
  handler: RecordHandler,
  overrides: Partial<KafkaTransportOptions> = {},
): Promise<INestMicroservice> {
  current = handler;
  const strategy = new KafkaTransport({
    connection,
    groupId,
    partitionsConcurrently: 2,
    maxInFlightPerPartition: 4,
    failureBackoffMs: 200,
    sessionTimeoutMs: 10_000,
    ...overrides,
  });
  const app = await NestFactory.createMicroservice(TestConsumerModule, {
    strategy,
    logger: ['error'],
  });
  await app.listen();
  return app;
}
