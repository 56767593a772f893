import { INestMicroservice } from '@nestjs/common';

import { HEADER } from '@app/contracts';
import {
  BatchProducer,
  BatchProducerOptions,
  IncomingRecord,
  KafkaConnection,
  TopicAdmin,
} from '@app/kafka';

import { eventually, serviceEnv, uniquePrefix } from '../../helpers/services';
import { startConsumerApp, TEST_TOPIC } from './consumer-app';

const RETENTION_MS = 3_600_000;

interface Harness {
  connection: KafkaConnection;
  admin: TopicAdmin;
  producer: BatchProducer;
}

async function harness(
  label: string,
  partitions: number,
  producerOptions: Partial<BatchProducerOptions> = {},
): Promise<Harness> {
  const connection = new KafkaConnection({
    brokers: serviceEnv().kafkaBrokers,
    clientId: `it-${label}`,
    topicPrefix: uniquePrefix(label),
  });
  const admin = new TopicAdmin(connection);
  await admin.connect();
  await admin.ensureTopics([
    { name: TEST_TOPIC, partitions, replicationFactor: -1, retentionMs: RETENTION_MS },
  ]);
  const producer = new BatchProducer(connection, producerOptions);
  await producer.connect();
  return { connection, admin, producer };
}

describe('Kafka lib against the real broker', () => {
  const apps: INestMicroservice[] = [];
  let h: Harness | undefined;

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await h?.producer.disconnect();
    await h?.admin.disconnect();
    h = undefined;
  });

  it('round-trips records with keys and headers through a registered handler', async () => {
    h = await harness('roundtrip', 2);
    const received: IncomingRecord[] = [];
    apps.push(await startConsumerApp(h.connection, 'g-roundtrip', (r) => void received.push(r)));
    await h.producer.send(
      ['a', 'b', 'c'].map((id) => ({
        topic: TEST_TOPIC,
        key: `src-1:${id}`,
        value: JSON.stringify({ id }),
        headers: { [HEADER.messageId]: `m-${id}`, [HEADER.sourceId]: 'src-1' },
      })),
    );
    await eventually(() => (received.length === 3 ? true : undefined), 20_000, '3 records');
    const byId = new Map(
      received.map((r) => [(JSON.parse(r.value!.toString()) as { id: string }).id, r]),
    );
    expect([...byId.keys()].sort()).toEqual(['a', 'b', 'c']);
    const b = byId.get('b')!;
    expect(b.topic).toBe(TEST_TOPIC);
    expect(b.key?.toString()).toBe('src-1:b');
    expect(b.headers[HEADER.messageId]?.toString()).toBe('m-b');
    expect(b.headers[HEADER.sourceId]?.toString()).toBe('src-1');
  });

  it('consumes every record when fetches are capped below a record batch and a record', async () => {
    h = await harness('fetch-cap', 1);
    const received = new Set<string>();
    apps.push(
      await startConsumerApp(
        h.connection,
        'g-fetch-cap',
        (r) => void received.add(r.key!.toString()),
        { maxBytesPerPartition: 1024 },
      ),
    );
    const record = (i: number) => ({ topic: TEST_TOPIC, key: `k-${i}`, value: 'x'.repeat(4096) });
    // One batch of 20 records of 4 KB, then 10 batches of one each: every fetch is over the cap.
    await h.producer.send(Array.from({ length: 20 }, (_, i) => record(i)));
    for (let i = 20; i < 30; i++) await h.producer.send([record(i)]);
    await eventually(() => (received.size === 30 ? true : undefined), 20_000, '30 records');
    expect([...received].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `k-${i}`).sort());
  });

  it.each([
    { lingerMs: 1_500, fetched: 'together' },
    { lingerMs: 0, fetched: 'one by one' },
  ])(
    'with a fetch linger of $lingerMs ms, records sent 60 ms apart are fetched $fetched',
    async ({ lingerMs }) => {
      h = await harness(`fetch-linger-${lingerMs}`, 1);
      const handledAt = new Map<string, number>();
      apps.push(
        await startConsumerApp(
          h.connection,
          `g-fetch-linger-${lingerMs}`,
          (r) => void handledAt.set(r.value!.toString(), Date.now()),
          { maxInFlightPerPartition: 100, fetchLingerMs: lingerMs },
        ),
      );
      const send = (value: string) => h!.producer.send([{ topic: TEST_TOPIC, value }]);
      // The first after a quiet spell comes at once: the fetch was waiting on the broker.
      await send('first');
      await eventually(() => handledAt.get('first'), 20_000, 'the first record');
      for (const value of ['a', 'b', 'c', 'd', 'e']) {
        await send(value);
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
      const times = await eventually(
        () => {
          const all = ['a', 'b', 'c', 'd', 'e'].map((v) => handledAt.get(v));
          return all.every((t) => t !== undefined) ? all : undefined;
        },
        20_000,
        'five records',
      );
      const spread = Math.max(...times) - Math.min(...times);
      // Sent over 240 ms: one fetch after the linger, or one fetch each.
      if (lingerMs > 0) expect(spread).toBeLessThan(120);
      else expect(spread).toBeGreaterThanOrEqual(180);
    },
  );

  it('gathers concurrent sends into few produce requests and acknowledges each', async () => {
    h = await harness('batching', 1);
    const sends = Array.from({ length: 200 }, (_, i) =>
      h!.producer.send([{ topic: TEST_TOPIC, key: `k${i % 7}`, value: String(i) }]),
    );
    await expect(Promise.all(sends)).resolves.toHaveLength(200);
    const seen = new Set<string>();
    apps.push(
      await startConsumerApp(h.connection, 'g-batching', (r) => void seen.add(r.value!.toString())),
    );
    await eventually(() => (seen.size === 200 ? true : undefined), 20_000, '200 records');
  });

  it('with two requests in flight, stores every record of sends made meanwhile once', async () => {
    h = await harness('in-flight', 2, { requestsInFlight: 2 });
    // Sends in waves a few ms apart, so that one wave's request is in flight when the next
    // goes out through the other producer.
    const sends: Promise<void>[] = [];
    for (let wave = 0; wave < 20; wave += 1) {
      for (let i = 0; i < 10; i += 1) {
        const n = wave * 10 + i;
        sends.push(h.producer.send([{ topic: TEST_TOPIC, key: `k${n % 5}`, value: String(n) }]));
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(sends);
    const seen: string[] = [];
    apps.push(
      await startConsumerApp(
        h.connection,
        'g-in-flight',
        (r) => void seen.push(r.value!.toString()),
      ),
    );
    await eventually(() => (seen.length >= 200 ? true : undefined), 20_000, '200 records');
    // Idempotent producers: no record twice (the wait lets a duplicate arrive if there were one).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen).toHaveLength(200);
    expect(new Set(seen).size).toBe(200);
  });

  it('leaves the offset of a failed record uncommitted, so the group consumes it again', async () => {
    h = await harness('redeliver', 1);
    await h.producer.send(
      ['ok-1', 'boom', 'ok-2'].map((v) => ({ topic: TEST_TOPIC, key: 'same-user', value: v })),
    );
    const firstSeen: string[] = [];
    const first = await startConsumerApp(h.connection, 'g-redeliver', (r) => {
      const value = r.value!.toString();
      firstSeen.push(value);
      if (value === 'boom') throw new Error('simulated infrastructure fault');
    });
    // The failing record is retried after the back-off, so it is seen at least twice.
    await eventually(() => (firstSeen.filter((v) => v === 'boom').length >= 2 ? true : undefined));
    await first.close();
    expect(firstSeen).not.toContain('ok-2'); // same key: stays behind the failing record

    const secondSeen: string[] = [];
    apps.push(
      await startConsumerApp(
        h.connection,
        'g-redeliver',
        (r) => void secondSeen.push(r.value!.toString()),
      ),
    );
    await eventually(() => (secondSeen.length === 2 ? true : undefined), 20_000, 'redelivery');
    expect(secondSeen).toEqual(['boom', 'ok-2']);
  });

  it('pauses a partition until its head record is due while other partitions flow', async () => {
    h = await harness('pause', 2);
    const handledAt = new Map<string, number>();
    apps.push(
      await startConsumerApp(
        h.connection,
        'g-pause',
        (r) => void handledAt.set(r.value!.toString(), Date.now()),
        { dueAtHeader: HEADER.dueAt },
      ),
    );
    const dueAt = Date.now() + 4_000;
    await h.producer.send([
      {
        topic: TEST_TOPIC,
        partition: 0,
        value: 'later',
        headers: { [HEADER.dueAt]: String(dueAt) },
      },
      { topic: TEST_TOPIC, partition: 0, value: 'behind-later' },
    ]);
    // Records produced to the other partition after the pause began are handled at once.
    await h.producer.send([{ topic: TEST_TOPIC, partition: 1, value: 'now-1' }]);
    await eventually(() => handledAt.get('now-1'), 10_000, 'now-1');
    await h.producer.send([{ topic: TEST_TOPIC, partition: 1, value: 'now-2' }]);
    await eventually(() => handledAt.get('now-2'), 10_000, 'now-2');
    expect(handledAt.get('now-2')!).toBeLessThan(dueAt);
    expect(handledAt.has('later')).toBe(false);

    const later = await eventually(() => handledAt.get('later'), 15_000, 'the due record');
    expect(later).toBeGreaterThanOrEqual(dueAt);
    expect(later - dueAt).toBeLessThan(3_000);
    const behind = await eventually(() => handledAt.get('behind-later'), 10_000, 'the next record');
    expect(behind).toBeGreaterThanOrEqual(later);
  });

  it('does not leave a paused partition paused after a rebalance', async () => {
    h = await harness('rebalance', 2);
    const handledAt = new Map<string, number>();
    const handler = (r: IncomingRecord) => void handledAt.set(r.value!.toString(), Date.now());
    const options = { dueAtHeader: HEADER.dueAt, sessionTimeoutMs: 6_000 };
    const first = await startConsumerApp(h.connection, 'g-rebalance', handler, options);
    apps.push(first);
    const dueAt = Date.now() + 5_000;
    await h.producer.send([
      { topic: TEST_TOPIC, partition: 0, value: 'p0', headers: { [HEADER.dueAt]: String(dueAt) } },
      { topic: TEST_TOPIC, partition: 1, value: 'p1', headers: { [HEADER.dueAt]: String(dueAt) } },
    ]);
    await eventually(() =>
      first.unwrap<{ paused(): unknown[] }>().paused().length > 0 ? true : undefined,
    );
    // A second member joins the group: partitions move while paused.
    apps.push(await startConsumerApp(h.connection, 'g-rebalance', handler, options));
    const p0 = await eventually(() => handledAt.get('p0'), 25_000, 'p0 after the rebalance');
    const p1 = await eventually(() => handledAt.get('p1'), 25_000, 'p1 after the rebalance');
    expect(Math.min(p0, p1)).toBeGreaterThanOrEqual(dueAt);
  });
});
