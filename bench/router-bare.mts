/**
 * The physical limit for the router: a bare kafkajs loop that moves the same records between
 * the same kind of topics, in its own process like the router. Per fetched batch of a
 * partition it rewrites each record the way the router does (key `destinationId:userKey`,
 * the value's bytes unchanged, the routing headers plus the destination id), produces the
 * batch with the same producer settings (idempotent, acks=all, murmur2 partitioner), and
 * commits the batch's offsets after the acknowledgement. Nothing else: no settings, no
 * Nest, no per-record handler.
 *
 * `node bench/router-bare.mts '<BareSpec as JSON>'` prints `{"event":"consuming"}` once
 * it consumes, and stops on SIGTERM or SIGINT.
 */
import kafkajs from 'kafkajs';

/** What the loop moves, and with which consumer settings. */
export interface BareSpec {
  readonly brokers: string;
  readonly groupId: string;
  readonly sourceTopic: string;
  readonly targetTopic: string;
  readonly destinationId: string;
  /** The router's ROUTER_PARTITIONS_CONCURRENTLY. */
  readonly partitionsConcurrently: number;
}

/** Header names of the contracts (libs/contracts/src/headers.ts). */
const HEADERS_KEPT = ['sluice-source-id', 'sluice-call-type', 'sluice-message-id'] as const;
const DESTINATION_HEADER = 'sluice-destination-id';

const spec = JSON.parse(process.argv[2] ?? '{}') as BareSpec;
const kafka = new kafkajs.Kafka({
  clientId: 'sluice-bench-bare',
  brokers: spec.brokers.split(','),
  logLevel: kafkajs.logLevel.ERROR,
});
// The settings of the project's KafkaConnection.producer() and KafkaTransport's consumer.
const producer = kafka.producer({
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
  createPartitioner: kafkajs.Partitioners.DefaultPartitioner,
});
const consumer = kafka.consumer({
  groupId: spec.groupId,
  sessionTimeout: 30_000,
  maxWaitTimeInMs: 500,
  allowAutoTopicCreation: false,
});

function delivery(message: kafkajs.KafkaMessage): kafkajs.Message {
  const key = message.key?.toString('utf8') ?? '';
  const headers: kafkajs.IHeaders = { [DESTINATION_HEADER]: spec.destinationId };
  for (const name of HEADERS_KEPT) {
    const value = message.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  return {
    key: `${spec.destinationId}:${key.slice(key.indexOf(':') + 1)}`,
    value: message.value,
    headers,
  };
}

async function main(): Promise<void> {
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic: spec.sourceTopic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: spec.partitionsConcurrently,
    eachBatch: async (payload) => {
      const { batch } = payload;
      if (batch.messages.length === 0) return;
      await producer.sendBatch({
        acks: -1,
        topicMessages: [{ topic: spec.targetTopic, messages: batch.messages.map(delivery) }],
      });
      const last = batch.messages[batch.messages.length - 1].offset;
      payload.resolveOffset(last);
      await consumer.commitOffsets([
        { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
      ]);
      await payload.heartbeat();
    },
  });
  process.stdout.write(`${JSON.stringify({ event: 'consuming' })}\n`);
}

async function stop(): Promise<void> {
  await consumer.disconnect();
  await producer.disconnect();
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop());

main().catch((error: unknown) => {
  process.stderr.write(
    `bare loop failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
