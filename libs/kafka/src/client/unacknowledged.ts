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
  // Partitions by topic, so that a record costs a number lookup, not a string built for it.
  const acknowledged = new Map<string, Set<number>>();
  for (const a of answers) {
    if (a.errorCode !== 0) continue;
    let partitions = acknowledged.get(a.topicName);
    if (!partitions) acknowledged.set(a.topicName, (partitions = new Set()));
    partitions.add(a.partition);
  }
  const missing = new Set<string>();
  for (const { topic, messages } of sent) {
    const partitions = acknowledged.get(topic);
    for (const message of messages) {
      const partition = message.partition ?? chosen.get(message);
      if (partition === undefined || partitions?.has(partition)) continue;
      missing.add(`${topic}:${partition}`);
    }
  }
  return [...missing];
}
