import {
  BatchProducer,
  ConsumerLagReader,
  KafkaConnection,
  TopicAdmin,
  type TopicLag,
} from '@app/kafka';

import { eventually, serviceEnv, uniquePrefix } from '../../helpers/services';

const TOPIC = 'it.lag.v1';
const OTHER = 'it.lag.other.v1';

describe(ConsumerLagReader.name, () => {
  const prefix = uniquePrefix('lag');
  const groupId = `${prefix}group`;
  let connection: KafkaConnection;
  let topics: TopicAdmin;
  let producer: BatchProducer;
  let reader: ConsumerLagReader;

  beforeAll(async () => {
    connection = new KafkaConnection({
      brokers: serviceEnv().kafkaBrokers,
      clientId: 'test-lag',
      topicPrefix: prefix,
    });
    topics = new TopicAdmin(connection);
    await topics.connect();
    await topics.ensureTopics(
      [TOPIC, OTHER].map((name) => ({
        name,
        partitions: 3,
        replicationFactor: -1,
        retentionMs: 3_600_000,
      })),
    );
    producer = new BatchProducer(connection);
    await producer.connect();
    reader = new ConsumerLagReader(connection, [{ groupId, topics: [TOPIC, OTHER] }]);
    await reader.connect();
  });

  afterAll(async () => {
    await reader?.disconnect();
    await producer?.disconnect();
    await topics?.disconnect();
  });

  it('sums uncommitted records per topic over its partitions, with the prefixed name', async () => {
    await producer.send(
      Array.from({ length: 9 }, (_, i) => ({
        topic: TOPIC,
        key: `k${i}`,
        value: Buffer.from(`v${i}`),
        partition: i % 3,
      })),
    );
    // Nothing committed yet: every record counts; the empty topic has no lag.
    await expect(firstRead(reader)).resolves.toEqual([
      { groupId, topic: `${prefix}${TOPIC}`, records: 9 },
      { groupId, topic: `${prefix}${OTHER}`, records: 0 },
    ]);

    const admin = connection.admin();
    await admin.connect();
    try {
      await admin.setOffsets({
        groupId,
        topic: connection.topic(TOPIC),
        partitions: [
          { partition: 0, offset: '3' },
          { partition: 1, offset: '1' },
        ],
      });
    } finally {
      await admin.disconnect();
    }
    // Partition 0 done, 2 left on partition 1, partition 2 never committed: 3 left.
    const [lag] = await reader.read();
    expect(lag.records).toBe(5);
  });
});

/**
 * The reader's first read. On a broker started moments ago, the group coordinator may still
 * be loading the offsets topic; the reader retries once (the exporter reads again at its next
 * refresh), so here the read is repeated while the answer is a retriable one.
 */
function firstRead(reader: ConsumerLagReader): Promise<TopicLag[]> {
  return eventually(
    () =>
      reader.read().catch((error: unknown) => {
        if ((error as { retriable?: boolean }).retriable === true) return undefined;
        throw error;
      }),
    30_000,
    'the group coordinator',
  );
}
