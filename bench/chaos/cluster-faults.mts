/**
 * The cluster stand's faults, one at a time: a broker killed, the in-sync minimum lost, every
 * app rolled and the dispatcher scaled as a Kubernetes Deployment does, and deliveries waiting
 * in the retry tiers while their leader is killed.
 */
import { progress } from '../common.mts';
import { type AppName, Apps, APPS, readiness } from './apps.mts';
import type { ChaosCluster } from './cluster-services.mts';
import { type Receiver, type Sender, sleep } from './traffic.mts';

/** How long a killed broker stays down before it is started again. */
const BROKER_DOWN_MS = 30_000;
/** After a kill, time for the controller to fence the broker and move its leaders. */
const FENCED_MS = 10_000;
/** How long the cluster stays below the in-sync minimum. */
const UNDER_MINIMUM_MS = 20_000;
/** How long the dispatcher runs at each size. */
const SCALE_HOLD_MS = 20_000;
/** The receiver fails this long before the retry tiers' leader is killed ... */
const RECEIVER_FAILING_BEFORE_MS = 8_000;
/** ... and this long after. */
const RECEIVER_FAILING_AFTER_MS = 7_000;
/** Longest wait for a new replica's /health/ready to answer 200. */
const READY_TIMEOUT_MS = 90_000;

/** When a fault ended, what "flowing again" counts from, and what it adds to the report. */
export interface FaultTimes {
  readonly end: number;
  readonly flowFrom?: number;
  readonly notes?: readonly string[];
}

export interface ClusterFault {
  readonly id: string;
  readonly name: string;
  act(): Promise<FaultTimes>;
}

/** What the faults act on. */
export interface FaultContext {
  readonly cluster: ChaosCluster;
  readonly apps: Apps;
  readonly receiver: Receiver;
  readonly sender: Sender;
  /** The stand's topic prefix: its topics are the ones whose leaders count. */
  readonly topicPrefix: string;
}

/** Every fault, in the order the full run takes them. */
export function clusterFaults(c: FaultContext): ClusterFault[] {
  const ours = (topic: string) => topic.startsWith(c.topicPrefix);
  return [
    {
      id: 'leader-kill',
      name: `SIGKILL of the leading broker, back after ${BROKER_DOWN_MS / 1_000} s`,
      act: () => leaderKill(c, ours),
    },
    {
      id: 'min-isr',
      name: 'a second broker stopped while the first is down',
      act: () => underMinimum(c, ours),
    },
    {
      id: 'rolling-restart',
      name: 'rolling restart of every app',
      act: () => rollingRestart(c.apps),
    },
    {
      id: 'scale-dispatcher',
      name: 'dispatcher scaled 2 -> 4 -> 1 (-> 2)',
      act: () => scaleDispatcher(c.apps),
    },
    {
      id: 'retry-leader-kill',
      name: "SIGKILL of the retry tiers' leader while deliveries wait there",
      act: () => retryLeaderKill(c, (t) => ours(t) && t.includes('.retry.')),
    },
  ];
}

async function leaderKill(c: FaultContext, ours: (t: string) => boolean): Promise<FaultTimes> {
  const node = await c.cluster.mostLeader(ours);
  const killedAt = Date.now();
  c.cluster.killNode(node);
  progress(`  node ${node} killed`);
  await sleep(BROKER_DOWN_MS);
  await c.cluster.startNode(node);
  return {
    end: Date.now(),
    flowFrom: killedAt,
    notes: [`node ${node} (it led the most partitions) killed; flowing again counts from the kill`],
  };
}

async function underMinimum(c: FaultContext, ours: (t: string) => boolean): Promise<FaultTimes> {
  const first = await c.cluster.mostLeader(ours);
  const killedAt = Date.now();
  c.cluster.killNode(first);
  progress(`  node ${first} killed`);
  await sleep(FENCED_MS);
  const second = await c.cluster.mostLeader(ours, [first]);
  const stopping = Date.now();
  await c.cluster.stopNode(second);
  const under = Date.now();
  progress(`  node ${second} stopped: one in-sync replica left`);
  await sleep(UNDER_MINIMUM_MS);
  const restoring = Date.now();
  await Promise.all([c.cluster.startNode(first), c.cluster.startNode(second)]);
  const answers = new Map<string, number>();
  for (const a of c.sender.answers) {
    if (a.at >= under && a.at < restoring)
      answers.set(a.outcome, (answers.get(a.outcome) ?? 0) + 1);
  }
  const acked = c.sender
    .acked()
    .filter((call) => call.ackedAt! >= under && call.ackedAt! < restoring);
  return {
    end: Date.now(),
    notes: [
      `node ${first} killed, node ${second} stopped in ${Math.round((under - stopping) / 100) / 10} s ` +
        `(a graceful stop, ${Math.round((stopping - killedAt) / 1_000)} s after the kill); both started again after ${UNDER_MINIMUM_MS / 1_000} s`,
      `ingest's answers while one replica was in sync: ${describe(answers)}; calls acknowledged then: ${acked.length}`,
    ],
  };
}

/**
 * Each app in turn, one replica at a time, as a Deployment with `maxSurge: 1` and
 * `maxUnavailable: 0` rolls: a new replica starts, and once it is ready an old one gets SIGTERM.
 */
async function rollingRestart(apps: Apps): Promise<FaultTimes> {
  const notes: string[] = [];
  for (const app of APPS) {
    const started = Date.now();
    for (const old of apps.instances(app)) {
      await surge(apps, app);
      await apps.retire(app, old.replica);
    }
    notes.push(`${app} rolled in ${((Date.now() - started) / 1_000).toFixed(1)} s`);
  }
  return { end: Date.now(), notes: [notes.join(', ')] };
}

async function scaleDispatcher(apps: Apps): Promise<FaultTimes> {
  await Promise.all([surge(apps, 'dispatcher'), surge(apps, 'dispatcher')]);
  progress('  4 dispatchers');
  await sleep(SCALE_HOLD_MS);
  const four = apps.instances('dispatcher');
  await Promise.all(four.slice(0, 3).map((i) => apps.retire('dispatcher', i.replica)));
  progress('  1 dispatcher');
  await sleep(SCALE_HOLD_MS);
  await surge(apps, 'dispatcher');
  return { end: Date.now(), notes: [`${SCALE_HOLD_MS / 1_000} s at 4, then at 1, then back to 2`] };
}

async function retryLeaderKill(
  c: FaultContext,
  retry: (t: string) => boolean,
): Promise<FaultTimes> {
  const failedBefore = c.receiver.failed;
  c.receiver.failWith = 503;
  await sleep(RECEIVER_FAILING_BEFORE_MS);
  const node = await c.cluster.mostLeader(retry);
  const killedAt = Date.now();
  c.cluster.killNode(node);
  progress(`  node ${node} killed`);
  await sleep(RECEIVER_FAILING_AFTER_MS);
  c.receiver.failWith = undefined;
  const back = Date.now();
  await sleep(Math.max(0, killedAt + BROKER_DOWN_MS - Date.now()));
  await c.cluster.startNode(node);
  return {
    end: Date.now(),
    flowFrom: back,
    notes: [
      `the receiver answered 503 to ${c.receiver.failed - failedBefore} POSTs for ` +
        `${(RECEIVER_FAILING_BEFORE_MS + RECEIVER_FAILING_AFTER_MS) / 1_000} s; node ${node} ` +
        `(it led the most retry-tier partitions) killed ${RECEIVER_FAILING_BEFORE_MS / 1_000} s in, ` +
        `started again ${BROKER_DOWN_MS / 1_000} s later; flowing again counts from the receiver's return`,
    ],
  };
}

/** Starts one more replica of an app and waits until it is ready. */
async function surge(apps: Apps, app: AppName): Promise<void> {
  const replica = apps.nextReplica(app);
  await apps.start(app, replica);
  const url = apps.url(app, replica);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while ((await readiness(url)) !== '200') {
    if (Date.now() > deadline) throw new Error(`${apps.label(app, replica)} not ready in time`);
    await sleep(250);
  }
}

function describe(counts: ReadonlyMap<string, number>): string {
  return [...counts].map(([outcome, n]) => `${outcome} x${n}`).join(', ') || 'none';
}
