import { INestMicroservice } from '@nestjs/common';

import { BatchProducer, IncomingRecord, KafkaConnection, TopicAdmin } from '@app/kafka';

import { eventually, serviceEnv, uniquePrefix } from '../../helpers/services';
import { startConsumerApp, TEST_TOPIC } from './consumer-app';

const GROUP = 'g-stop-rebalance';

/** A promise with its resolver, to hold a handler until the test lets it finish. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A member stopped while its group rebalances: its join waits at the broker for a member that
 * does not join again (busy in a handler), and meanwhile the stopped member finished a record.
 * What it finished is committed before it leaves, so the partition's next owner does not
 * handle it again.
 */
describe('a member stopped during a rebalance', () => {
  let connection: KafkaConnection;
  let admin: TopicAdmin;
  let producer: BatchProducer;
  const apps: INestMicroservice[] = [];
  let stuck: ReturnType<KafkaConnection['consumer']> | undefined;
  const stuckGate = gate();

  beforeAll(async () => {
    connection = new KafkaConnection({
      brokers: serviceEnv().kafkaBrokers,
      clientId: 'it-stop-rebalance',
      topicPrefix: uniquePrefix('stoprb'),
    });
    admin = new TopicAdmin(connection);
    await admin.connect();
    await admin.ensureTopics([
      { name: TEST_TOPIC, partitions: 2, replicationFactor: -1, retentionMs: 3_600_000 },
    ]);
    producer = new BatchProducer(connection, {});
    await producer.connect();
  });

  afterAll(async () => {
    stuckGate.open();
    await stuck?.disconnect();
    for (const app of apps.splice(0)) await app.close();
    await producer.disconnect();
    await admin.disconnect();
  });

  it('commits what it finished, and the next owner does not handle it again', async () => {
    const handled: { by: string; value: string }[] = [];
    const firstGate = gate();
    let firstBusy: string | undefined;
    const first = await startConsumerApp(connection, GROUP, async (r: IncomingRecord) => {
      firstBusy = r.value!.toString();
      handled.push({ by: 'first', value: firstBusy });
      await firstGate.opened;
    });

    // A plain kafkajs member that, once busy in its handler, joins no rebalance until its
    // session expires: the group's next rebalance waits for it meanwhile.
    stuck = connection.consumer({
      groupId: GROUP,
      sessionTimeout: 25_000,
      rebalanceTimeout: 30_000,
      heartbeatInterval: 1_000,
    });
    let stuckBusy = false;
    let stuckJoined = false;
    stuck.on(stuck.events.GROUP_JOIN, () => (stuckJoined = true));
    await stuck.connect();
    await stuck.subscribe({ topics: [connection.topic(TEST_TOPIC)], fromBeginning: true });
    await stuck.run({
      eachMessage: async ({ message }) => {
        handled.push({ by: 'stuck', value: message.value!.toString() });
        stuckBusy = true;
        await stuckGate.opened;
      },
    });
    await eventually(() => (stuckJoined ? true : undefined), 30_000, 'the stuck member joined');
    await sleep(2_000);
    await producer.send([
      { topic: TEST_TOPIC, partition: 0, value: 'r0' },
      { topic: TEST_TOPIC, partition: 1, value: 'r1' },
    ]);
    await eventually(() => (firstBusy && stuckBusy ? true : undefined), 15_000, 'both busy');
    const finishedByFirst = firstBusy!;

    // A third member joins: the group rebalances, and waits for the stuck member.
    const third = await startConsumerApp(
      connection,
      GROUP,
      (r: IncomingRecord) => void handled.push({ by: 'third', value: r.value!.toString() }),
    );
    apps.push(third);
    // The first member learns of it, waits for its record (3 s at most), and joins.
    await sleep(9_000);
    firstGate.open();
    await sleep(500);
    const closing = Date.now();
    await first.close();
    // Left at once, rather than once the stuck member's session expired.
    const closeMs = Date.now() - closing;

    // The stuck member goes; the third one owns both partitions.
    stuckGate.open();
    await stuck.disconnect();
    stuck = undefined;
    await producer.send([
      { topic: TEST_TOPIC, partition: 0, value: 'm0' },
      { topic: TEST_TOPIC, partition: 1, value: 'm1' },
    ]);
    const seen = (value: string) => handled.some((h) => h.by === 'third' && h.value === value);
    await eventually(() => (seen('m0') && seen('m1') ? true : undefined), 60_000, 'the markers');
    expect(handled.filter((h) => h.value === finishedByFirst)).toEqual([
      { by: 'first', value: finishedByFirst },
    ]);
    expect(closeMs).toBeLessThan(8_000);
  }, 120_000);
});
