import { randomUUID } from 'node:crypto';

import { loadDispatcherConfig } from '../../../apps/dispatcher/src/config';
import { dispatcherKafka } from '../../../apps/dispatcher/src/kafka-topology';

import { ChildDispatcher } from '../../helpers/child-dispatcher';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { callOf, firstArrivals, NO_BREAKER, order, send } from '../../helpers/ordered-calls';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** Users whose calls the receiver refuses until it recovers; enough to be on both partitions. */
const HELD_USERS = 10;
const OTHER_USERS = 40;
const CALLS_PER_USER = 5;

/**
 * An ordered destination whose receiver refuses some users' calls for a while: each such call
 * is held in place, its user's later calls waiting behind it. A second dispatcher then joins
 * the group, and the rebalance moves a partition to it: the first dispatcher gives up the holds
 * of its old assignment (abandoned, not committed), and each partition's owner reads the held
 * calls and the calls waiting behind them again from the last commit. Once the receiver
 * recovers, every call is delivered, each user's calls first arrive in order, and no held call
 * is delivered twice (an abandoned hold does not go on beside the new owner's). Without
 * ordering, a refused call's retry tier lets its user's later calls overtake it.
 */
describe('ordered delivery through a rebalance', () => {
  const harness = new DispatcherHarness();
  const second = new ChildDispatcher();
  let sink: WebhookReceiver;
  const statuses: number[] = [];
  let refusing = true;

  beforeAll(async () => {
    second.build();
    await harness.start({
      DISPATCHER_ORDERING_RETRY_DELAYS_MS: '50,100,200',
      DISPATCHER_RETRY_WINDOW_SECONDS: '600',
      ...NO_BREAKER,
    });
    sink = await new WebhookReceiver().start();
    sink.answer = (request, index) => {
      const held = refusing && callOf(request).userId.startsWith('held');
      return { status: (statuses[index] = held ? 500 : 200) };
    };
  });

  afterAll(async () => {
    await second.close();
    await sink?.stop();
    await harness.close();
  });

  it('keeps each held user in order across the rebalance and loses nothing', async () => {
    const source = await harness.source();
    const destination = await harness.webhookDestination(source.id, { urls: [sink.url()] });
    await order(harness, destination.id, 100, 600);
    await harness.dispatcherSees(destination.id, (d) => d?.ordering?.maxPendingCalls === 100);
    const run = randomUUID().slice(0, 8);
    const users = [
      ...Array.from({ length: HELD_USERS }, (_, i) => `held${i}`),
      ...Array.from({ length: OTHER_USERS }, (_, i) => `other${i}`),
    ];
    const calls = Array.from({ length: CALLS_PER_USER }, (_, seq) =>
      users.map((user) => ({ userId: `${user}-${run}`, messageId: `${user}:${seq}:${run}` })),
    ).flat();
    await send(harness, source.writeKey, calls);
    const delivered = () =>
      new Set(sink.requests.filter((_, i) => statuses[i] === 200).map((r) => callOf(r).messageId));

    // The other users' calls are delivered while the held users' first calls are retried.
    await eventually(
      () => (delivered().size >= OTHER_USERS * CALLS_PER_USER ? true : undefined),
      30_000,
      'the other users delivered',
    );
    const triedSince = (since: number) =>
      new Set(
        sink.requests
          .filter((r) => r.at >= since && callOf(r).userId.startsWith('held'))
          .map((r) => callOf(r).userId),
      );
    await eventually(
      () => (triedSince(0).size === HELD_USERS ? true : undefined),
      10_000,
      "every held user's call tried",
    );

    // A second dispatcher joins: the group rebalances, one partition to each.
    second.start(harness.dispatcherEnv);
    const groupId = dispatcherKafka(loadDispatcherConfig(harness.dispatcherEnv)).consumers.main
      .groupId;
    const admin = harness.connection.admin();
    await admin.connect();
    try {
      await eventually(
        async () => {
          const {
            groups: [group],
          } = await admin.describeGroups([groupId]);
          return group.state === 'Stable' && group.members.length === 2 ? true : undefined;
        },
        45_000,
        'two dispatchers in the group',
      );
    } finally {
      await admin.disconnect();
    }
    // Both owners hold the held users' calls again, still refused.
    const rebalanced = Date.now();
    await eventually(
      () => (triedSince(rebalanced).size === HELD_USERS ? true : undefined),
      20_000,
      "every held user's call retried after the rebalance",
    );
    expect(delivered().size).toBe(OTHER_USERS * CALLS_PER_USER);

    refusing = false;
    await eventually(
      () => (delivered().size === calls.length ? true : undefined),
      30_000,
      `all ${calls.length} calls delivered`,
    );
    const arrivals = firstArrivals(sink.requests, statuses);
    const inOrder = Array.from({ length: CALLS_PER_USER }, (_, seq) => seq).join();
    const outOfOrder = [...arrivals].filter(([, seqs]) => seqs.join() !== inOrder);
    expect(outOfOrder).toEqual([]);
    expect(arrivals.size).toBe(users.length);
    // The holds of the first dispatcher's old assignment were given up at the rebalance, not
    // carried on beside the partition's owner: each held call was taken once. (Other users'
    // calls after a held one in its partition were not committed, so they are delivered again:
    // at least once.)
    const heldTaken = sink.requests
      .filter((r, i) => statuses[i] === 200 && callOf(r).userId.startsWith('held'))
      .map((r) => callOf(r).messageId);
    expect(heldTaken.length - new Set(heldTaken).size).toBe(0);
  }, 110_000);
});
