import { randomBytes } from 'node:crypto';

import { headerText, IncomingRecord, KafkaConnection, incomingRecord } from '@app/kafka';

import { eventually } from './services';

/**
 * Reads topics from the beginning into memory, for assertions. A fresh consumer group each
 * time, so it sees every record; tests use their own topic prefix, so only their records.
 */
export class TopicReader {
  readonly records: IncomingRecord[] = [];
  private consumer?: ReturnType<KafkaConnection['consumer']>;
  private stopped = false;

  constructor(
    private readonly connection: KafkaConnection,
    private readonly topics: readonly string[],
  ) {}

  async start(): Promise<this> {
    const consumer = this.connection.consumer({
      groupId: `test-reader-${randomBytes(4).toString('hex')}`,
      maxWaitTimeInMs: 200,
      retry: { restartOnFailure: () => Promise.resolve(!this.stopped) },
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({
      topics: this.topics.map((t) => this.connection.topic(t)),
      fromBeginning: true,
    });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        this.records.push(
          incomingRecord(this.connection.logicalTopic(topic) ?? topic, partition, message),
        );
      },
    });
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.consumer?.disconnect();
  }

  /** Records of `topic` whose header `name` equals `value`. */
  withHeader(topic: string, name: string, value: string): IncomingRecord[] {
    return this.records.filter((r) => r.topic === topic && headerText(r, name) === value);
  }

  /** Waits until `count` records of `topic` match `predicate`, then returns them. */
  async waitFor(
    topic: string,
    predicate: (record: IncomingRecord) => boolean,
    count = 1,
    timeoutMs = 15_000,
  ): Promise<IncomingRecord[]> {
    return eventually(
      () => {
        const found = this.records.filter((r) => r.topic === topic && predicate(r));
        return found.length >= count ? found : undefined;
      },
      timeoutMs,
      `${count} record(s) on ${topic}`,
    );
  }
}

/** A record's value as JSON. */
export function json(record: IncomingRecord): Record<string, unknown> {
  return JSON.parse(record.value?.toString('utf8') ?? 'null') as Record<string, unknown>;
}
