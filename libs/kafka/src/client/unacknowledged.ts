import { RecordMetadata, TopicMessages } from 'kafkajs';

/**
 * A send kafkajs resolved although a partition it wrote to has no answer: when a partition's
 * leader moves during a send to a broker that already answered for other partitions, kafkajs
 * 2.2.4's retry skips that broker, and the moved partition's records are never sent again.
 * Treated as a failed send: nothing of it is acknowledged to the caller.
 */
export class KafkaUnacknowledgedError extends Error {
  readonly code = 'KAFKA_UNACKNOWLEDGED';

  constructor(readonly partitions: readonly string[]) {
    super(`Kafka did not acknowledge the records for ${partitions.join(', ')}`);
    this.name = 'KafkaUnacknowledgedError';
  }
}

/**
 * The `topic:partition`s a send wrote records to that its answers do not acknowledge (no
 * answer, or an answer with an error code). A record's partition is its explicit one, else
 * the one the partitioner chose for it (`chosen`); a record with neither is not checked.
 */
export function unacknowledgedPartitions(
  sent: readonly TopicMessages[],
  answers: readonly RecordMetadata[],
  chosen: { get(message: object): number | undefined },
): string[] {
  const acknowledged = new Set(
    answers.filter((a) => a.errorCode === 0).map((a) => `${a.topicName}:${a.partition}`),
  );
  const missing = new Set<string>();
  for (const { topic, messages } of sent) {
    for (const message of messages) {
      const partition = message.partition ?? chosen.get(message);
      if (partition === undefined) continue;
      const key = `${topic}:${partition}`;
      if (!acknowledged.has(key)) missing.add(key);
    }
  }
  return [...missing];
}
