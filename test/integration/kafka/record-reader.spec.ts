import {
  BatchProducer,
  IncomingRecord,
  KafkaConnection,
  PartitionWants,
  RecordPosition,
  RecordReader,
  TopicAdmin,
} from '@app/kafka';

import { serviceEnv, uniquePrefix } from '../../helpers/services';

const TOPIC = 'it.reader.v1';
const PER_PARTITION = 3_000;

/**
 * RecordReader against the real broker: a topic of two partitions holding PER_PARTITION
 * records each at offsets 0..PER_PARTITION-1 (value `p<partition>-<offset>`), and records
 * read back at scattered positions.
 */
describe(RecordReader.name, () => {
  let connection: KafkaConnection;
  let admin: TopicAdmin;
  let producer: BatchProducer;

  beforeAll(async () => {
    connection = new KafkaConnection({
      brokers: serviceEnv().kafkaBrokers,
      clientId: 'it-reader',
      topicPrefix: uniquePrefix('reader'),
    });
    admin = new TopicAdmin(connection);
    await admin.connect();
    await admin.ensureTopics([
      { name: TOPIC, partitions: 2, replicationFactor: -1, retentionMs: 3_600_000 },
    ]);
    producer = new BatchProducer(connection);
    await producer.connect();
    for (const partition of [0, 1]) {
      await producer.send(
        Array.from({ length: PER_PARTITION }, (_, offset) => ({
          topic: TOPIC,
          partition,
          key: `k-${offset}`,
          value: `p${partition}-${offset}`,
          headers: { h: `${partition}/${offset}` },
        })),
      );
    }
  }, 60_000);

  afterAll(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
  });

  async function readAll(
    positions: RecordPosition[],
    reader = new RecordReader(connection),
  ): Promise<{ records: IncomingRecord[]; missing: RecordPosition[]; found: number }> {
    const records: IncomingRecord[] = [];
    const summary = await reader.read(TOPIC, positions, (batch) => {
      records.push(...batch);
      return Promise.resolve();
    });
    return { records, ...summary };
  }

  const at = (partition: number, offset: number): RecordPosition => ({
    partition,
    offset: String(offset),
  });

  it('reads scattered positions of several partitions, each once, with key and headers', async () => {
    const wanted = [at(0, 2_999), at(0, 0), at(0, 1_500), at(0, 5), at(1, 2_000), at(1, 10)];
    const { records, missing, found } = await readAll([...wanted, at(0, 5)]);
    expect(missing).toEqual([]);
    expect(found).toBe(6);
    expect(records.map((r) => r.value?.toString()).sort()).toEqual(
      ['p0-0', 'p0-5', 'p0-1500', 'p0-2999', 'p1-10', 'p1-2000'].sort(),
    );
    const r = records.find((x) => x.value?.toString() === 'p1-2000')!;
    expect(r).toMatchObject({ topic: TOPIC, partition: 1, offset: '2000' });
    expect(r.key?.toString()).toBe('k-2000');
    expect(r.headers.h?.toString()).toBe('1/2000');
  }, 30_000);

  it('reads every record of a partition in offset order', async () => {
    const positions = Array.from({ length: PER_PARTITION }, (_, offset) => at(0, offset));
    const { records, found } = await readAll(positions);
    expect(found).toBe(PER_PARTITION);
    expect(records.map((r) => r.offset)).toEqual(positions.map((p) => p.offset));
  }, 30_000);

  it('reports positions past the end, or of a partition the topic lacks, as missing', async () => {
    const { records, missing } = await readAll([at(1, 7), at(1, PER_PARTITION), at(5, 0)]);
    expect(records.map((r) => r.value?.toString())).toEqual(['p1-7']);
    expect(missing).toEqual(expect.arrayContaining([at(1, PER_PARTITION), at(5, 0)]));
    expect(missing).toHaveLength(2);
  }, 30_000);

  it('fails the read when the callback fails', async () => {
    const reader = new RecordReader(connection);
    await expect(
      reader.read(TOPIC, [at(0, 1)], () => Promise.reject(new Error('cannot take it'))),
    ).rejects.toThrow('cannot take it');
  }, 30_000);

  it('reports records removed from the start of a partition as missing', async () => {
    const kafka = connection.admin();
    await kafka.connect();
    try {
      // kafkajs needs the topic's metadata loaded before it deletes records.
      await kafka.fetchTopicMetadata({ topics: [connection.topic(TOPIC)] });
      await kafka.deleteTopicRecords({
        topic: connection.topic(TOPIC),
        partitions: [{ partition: 1, offset: '100' }],
      });
    } finally {
      await kafka.disconnect();
    }
    const { records, missing } = await readAll([at(1, 50), at(1, 100)]);
    expect(records.map((r) => r.value?.toString())).toEqual(['p1-100']);
    expect(missing).toEqual([at(1, 50)]);
  }, 30_000);
});

describe(PartitionWants.name, () => {
  it('finds wanted offsets in runs of records and passes over the absent ones', () => {
    const wants = new PartitionWants([9n, 3n, 5n, 3n, 20n]);
    expect(wants.next).toBe(3n);
    // A run from 2 to 6 without 5 (compacted away): 3 is found, 5 is missing.
    expect(wants.take([2n, 3n, 4n, 6n])).toEqual({ wanted: [1], missing: [5n] });
    expect(wants.next).toBe(9n);
    expect(wants.take([9n, 10n])).toEqual({ wanted: [0], missing: [] });
    expect(wants.done).toBe(false);
    expect(wants.take([25n])).toEqual({ wanted: [], missing: [20n] });
    expect(wants.done).toBe(true);
  });

  it('drops the offsets outside the partition', () => {
    const wants = new PartitionWants([1n, 4n, 7n, 12n]);
    expect(wants.dropBelow(3n)).toEqual([1n]);
    expect(wants.dropFrom(10n)).toEqual([12n]);
    expect(wants.take([4n, 5n, 6n, 7n])).toEqual({ wanted: [0, 3], missing: [] });
    expect(wants.done).toBe(true);
  });
});
