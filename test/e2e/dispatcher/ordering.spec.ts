import { randomUUID } from 'node:crypto';

import { TOPIC } from '@app/contracts';

import { ChildDispatcher } from '../../helpers/child-dispatcher';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { callOf, firstArrivals, NO_BREAKER, order, send } from '../../helpers/ordered-calls';
import { eventually } from '../../helpers/services';
import { ReceivedRequest, WebhookReceiver } from '../../helpers/webhook-receiver';

/**
 * An ordered destination whose receiver fails 20% of requests at random; its dispatcher (a
 * child process) is killed with SIGKILL mid-run and started again. At the receiver, each user's
 * calls first arrive (are first taken, 2xx) in the order ingest accepted them, and every call is
 * delivered. Without ordering, a failed call's retry tier lets the user's later calls overtake
 * it.
 */
describe('ordered delivery through failures and a SIGKILL', () => {
  const USERS = 1_000;
  const CALLS_PER_USER = 20;
  const harness = new DispatcherHarness();
  const dispatcher = new ChildDispatcher();
  let sink: WebhookReceiver;
  const statuses: number[] = [];
  const answered = (index: number, status: number) => ({ status: (statuses[index] = status) });

  beforeAll(async () => {
    dispatcher.build();
    await harness.start(
      {
        DISPATCHER_ORDERING_RETRY_DELAYS_MS: '20,50,100',
        DISPATCHER_RETRY_WINDOW_SECONDS: '600',
        ...NO_BREAKER,
      },
      false,
    );
    sink = await new WebhookReceiver().start();
    sink.answer = (_, index) => answered(index, Math.random() < 0.2 ? 500 : 200);
  });

  afterAll(async () => {
    await dispatcher.close();
    await sink?.stop();
    await harness.close();
  });

  it("keeps each user's first arrivals in order and loses nothing", async () => {
    const source = await harness.source();
    const destination = await harness.webhookDestination(source.id, {
      urls: [sink.url()],
      enabled: false,
    });
    await order(harness, destination.id, 100, 600);
    await harness.sql('UPDATE destination SET enabled = true WHERE id = $1', [destination.id]);
    await harness.routerSeesDestination(destination.id, (d) => d?.enabled === true);
    const run = randomUUID().slice(0, 8);
    const calls: { userId: string; messageId: string }[] = [];
    // Interleaved: each user's calls are spread over the whole run.
    for (let seq = 0; seq < CALLS_PER_USER; seq += 1) {
      for (let user = 0; user < USERS; user += 1) {
        calls.push({ userId: `u${user}-${run}`, messageId: `${user}:${seq}:${run}` });
      }
    }
    await send(harness, source.writeKey, calls);
    await harness.settled();

    dispatcher.start(harness.dispatcherEnv);
    await sink.received((USERS * CALLS_PER_USER) / 3, 60_000);
    await dispatcher.stop('SIGKILL');
    const beforeKill = statuses.filter((status) => status === 200).length;
    dispatcher.start(harness.dispatcherEnv);

    const delivered = await eventually(
      () => {
        const ok = new Set<string>();
        sink.requests.forEach((r, i) => {
          if (statuses[i] === 200) ok.add(callOf(r).messageId);
        });
        return ok.size === calls.length ? ok : undefined;
      },
      90_000,
      `all ${calls.length} calls delivered`,
    );
    expect(delivered.size).toBe(USERS * CALLS_PER_USER);
    // The kill came mid-run: most calls were delivered after the restart.
    expect(beforeKill).toBeLessThan(calls.length / 2);
    // Each user's calls in the order of their first arrival (the first request taken, 2xx).
    const arrivals = firstArrivals(sink.requests, statuses);
    const inOrder = Array.from({ length: CALLS_PER_USER }, (_, seq) => seq);
    const outOfOrder = [...arrivals].filter(([, seqs]) => seqs.join() !== inOrder.join());
    expect(outOfOrder).toEqual([]);
    expect(arrivals.size).toBe(USERS);
  }, 240_000);
});

/**
 * Users whose calls always fail, past the destination's bounds: their ordering is suspended
 * (counted, and said in the ledger), and the other users' calls never waited for them.
 */
describe('ordered delivery with stuck users', () => {
  const harness = new DispatcherHarness();
  let sink: WebhookReceiver;
  const statuses: number[] = [];
  const answered = (index: number, status: number) => ({ status: (statuses[index] = status) });

  beforeAll(async () => {
    await harness.start({
      DISPATCHER_ORDERING_RETRY_DELAYS_MS: '50,100,200',
      DISPATCHER_RETRY_WINDOW_SECONDS: '120',
      ...NO_BREAKER,
    });
    sink = await new WebhookReceiver().start();
    sink.answer = (request, index) =>
      answered(index, callOf(request).userId.startsWith('stuck') ? 500 : 200);
  });

  afterAll(async () => {
    await sink?.stop();
    await harness.close();
  });

  it('suspends them past their bounds, counts it, and lets the others flow meanwhile', async () => {
    const source = await harness.source();
    const destination = await harness.webhookDestination(source.id, { urls: [sink.url()] });
    const MAX_HOLD_SECONDS = 4;
    await order(harness, destination.id, 3, MAX_HOLD_SECONDS);
    await harness.dispatcherSees(destination.id, (d) => d?.ordering?.maxPendingCalls === 3);
    const run = randomUUID().slice(0, 8);
    const call = (user: string, seq: number) => ({
      userId: `${user}-${run}`,
      messageId: `${user}:${seq}:${run}`,
    });
    // stuck-a waits out the hold time (fewer calls than the bound); stuck-b passes the bound.
    const stuck = [0, 1].map((seq) => call('stuck-a', seq));
    stuck.push(...[0, 1, 2, 3, 4, 5].map((seq) => call('stuck-b', seq)));
    const others = [0, 1, 2].flatMap((seq) =>
      Array.from({ length: 30 }, (_, user) => call(`other${user}`, seq)),
    );
    await send(harness, source.writeKey, stuck);
    await send(harness, source.writeKey, others);

    const othersDelivered = await eventually(
      () => {
        const ok = sink.requests.filter(
          (r, i) => statuses[i] === 200 && callOf(r).userId.startsWith('other'),
        );
        return ok.length >= others.length ? ok : undefined;
      },
      60_000,
      'the other users delivered',
    );
    const lastOtherAt = Math.max(...othersDelivered.map((r) => r.at));
    const stuckA = (r: ReceivedRequest) => callOf(r).messageId === `stuck-a:0:${run}`;
    const firstStuckAt = sink.requests.find(stuckA)!.at;
    // Delivered while stuck-a's first call was still held and failing.
    expect(lastOtherAt).toBeLessThan(firstStuckAt + MAX_HOLD_SECONDS * 1000);
    await eventually(
      () => (sink.requests.some((r) => stuckA(r) && r.at > lastOtherAt) ? true : undefined),
      10_000,
      'stuck-a retried after the others were delivered',
    );
    // Each other user's calls arrived in order.
    for (let user = 0; user < 30; user += 1) {
      const seqs = othersDelivered
        .map(callOf)
        .filter((c) => c.userId === `other${user}-${run}`)
        .map((c) => Number(c.messageId.split(':')[1]));
      expect(seqs).toEqual([0, 1, 2]);
    }

    await eventually(
      async () => {
        const pending = await harness.dispatcherMetric(
          'sluice_dispatcher_ordering_suspended_total',
          {
            reason: 'pending',
          },
        );
        const held = await harness.dispatcherMetric('sluice_dispatcher_ordering_suspended_total', {
          reason: 'hold_time',
        });
        return pending >= 1 && held >= 1 ? true : undefined;
      },
      20_000,
      'suspensions for pending calls and for the hold time counted',
    );
    // The ledger's outcome of stuck-a's first call says its ordering was suspended.
    await expect(
      harness.outbound.waitFor(
        TOPIC.deliveryOutcomes,
        (r) => {
          const text = r.value?.toString() ?? '';
          return text.includes(`stuck-a:0:${run}`) && text.includes('ordering_suspended_hold_time');
        },
        1,
        20_000,
      ),
    ).resolves.toHaveLength(1);
  }, 120_000);
});
