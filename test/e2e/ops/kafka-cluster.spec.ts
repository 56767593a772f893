import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { CLUSTER_SIZE, KafkaCluster, MIN_INSYNC_REPLICAS } from '../../helpers/kafka-cluster';
import { RouterHarness } from '../../helpers/router-harness';
import { eventually } from '../../helpers/services';
import { TopicReader } from '../../helpers/topic-reader';

/**
 * Ingest and the router on a three-broker KRaft cluster of the test's own (replication factor
 * 3, `min.insync.replicas=2`): the broker leading most partitions of the calls topic is killed
 * (SIGKILL) under a small load. Every call ingest acknowledged, before, during and after, is
 * routed to a delivery; none is lost.
 */
describe('a three-broker cluster losing a broker under load', () => {
  const cluster = new KafkaCluster();
  const h = new RouterHarness();

  beforeAll(async () => {
    await cluster.start();
    await h.start({
      KAFKA_BROKERS: cluster.brokers,
      KAFKA_TOPIC_PARTITIONS: '3',
      KAFKA_REPLICATION_FACTOR: String(CLUSTER_SIZE),
    });
  }, 150_000);

  afterAll(async () => {
    await h.close();
    await cluster.destroy();
  }, 60_000);

  it('loses no acknowledged call when the leader of most partitions is killed', async () => {
    const source = await h.source();
    await h.destination(source.id);
    const admin = h.connection.admin();
    await admin.connect();
    const calls = h.connection.topic(TOPIC.calls);
    let victim: number;
    try {
      const [topic] = (await admin.fetchTopicMetadata({ topics: [calls] })).topics;
      expect(topic.partitions.map((p) => p.replicas.length)).toEqual([3, 3, 3]);
      const configs = await admin.describeConfigs({
        resources: [{ type: 2 /* topic */, name: calls, configNames: ['min.insync.replicas'] }],
        includeSynonyms: false,
      });
      expect(configs.resources[0].configEntries[0].configValue).toBe(String(MIN_INSYNC_REPLICAS));
      victim = mostLeader(topic.partitions.map((p) => p.leader));
    } finally {
      await admin.disconnect();
    }

    const acknowledged: string[] = [];
    const statuses = new Set<number>();
    let loading = true;
    const load = async () => {
      while (loading) {
        const ids = Array.from({ length: 5 }, () => randomUUID());
        const batch = ids.map((messageId, i) => ({
          type: 'track',
          userId: `u-${i}`,
          event: 'Cluster',
          messageId,
        }));
        const answer = await h.post('/v1/batch', { batch }, { basic: source.writeKey });
        statuses.add(answer.status);
        if (answer.status === 200) acknowledged.push(...ids);
        await sleep(50);
      }
    };
    const load1 = load();
    const load2 = load();
    try {
      await eventually(() => (acknowledged.length >= 50 ? true : undefined), 30_000, '50 calls');
      cluster.killNode(victim);
      const before = acknowledged.length;
      // Two in-sync replicas remain: once the controller has moved the leaders (after the
      // killed broker's session expires), ingest acknowledges again.
      await eventually(
        () => (acknowledged.length >= before + 50 ? true : undefined),
        40_000,
        '50 more calls acknowledged after the kill',
      );
    } finally {
      loading = false;
      await Promise.all([load1, load2]);
    }
    expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);

    // The router has committed every call (a call not routed would hold its lag above 0) ...
    await eventually(
      async () => ((await h.routerLag()) === 0 ? true : undefined),
      45_000,
      'the router to route every call',
    );
    // ... and a reader that starts now, after the loss, finds a delivery of each.
    const reader = await new TopicReader(h.connection, [TOPIC.deliveries]).start();
    try {
      const missing = await eventually(
        () => {
          const routed = new Set(reader.records.map((r) => headerText(r, HEADER.messageId)));
          const left = acknowledged.filter((id) => !routed.has(id));
          return left.length === 0 ? left : undefined;
        },
        30_000,
        `a delivery of each of the ${acknowledged.length} acknowledged calls`,
      );
      expect(missing).toEqual([]);
    } finally {
      await reader.stop();
    }
  }, 110_000);
});

/** The broker id that leads the most partitions. */
function mostLeader(leaders: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const leader of leaders) counts.set(leader, (counts.get(leader) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0][0];
}
