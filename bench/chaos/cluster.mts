/**
 * The cluster stand (`npm run chaos -- --cluster`, docs/operations.md "Chaos suite"): a
 * three-node KRaft cluster on fixed loopback ports (topics with replication factor 3 and
 * `min.insync.replicas=2`), two replicas of every app on one database of the shared
 * PostgreSQL, the open-loop sender spread over both ingest replicas, the signature-checking
 * receiver, and the faults of cluster-faults.mts one at a time.
 *
 * Options: `--fault <id>[,<id>...]` (or CHAOS_FAULTS) runs only those faults; CHAOS_RATE
 * calls/s (150), CHAOS_JSON (a file for the results), CHAOS_LOG_DIR (a folder for each
 * replica's log), DATABASE_URL (the shared PostgreSQL; its role must be allowed to create
 * databases).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { progress, runBench } from '../common.mts';
import { ReadinessWatch } from './apps.mts';
import { type ClusterFault, clusterFaults } from './cluster-faults.mts';
import { ChaosCluster, SharedDatabase } from './cluster-services.mts';
import { CommitWatch } from './commit-watch.mts';
import { DRAIN_TIMEOUT_MS, drained, firstDelivery, recovered, settled } from './phases.mts';
import {
  type ChaosReport,
  clusterResultsTable,
  LATE_MS,
  type PhaseTimes,
  results,
} from './results.mts';
import { kafkaLibs, ROOT, Stand } from './stand.mts';
import { type Receiver, Sender, sleep } from './traffic.mts';

/** Node n's listener is at 19192 + 2(n-1), its controller's one above (19192-19197). */
const BROKER_PORT_BASE = 19_192;
/** The apps' ports: 18101-18119 ingest's replicas, 18121- router's, and so on. */
const APP_PORT_BASE = 18_100;
/** The stand's database in the shared PostgreSQL, dropped and made again on each run. */
const DATABASE = 'sluice_cluster_chaos';
/** Steady traffic before each fault. */
const LEAD_MS = 5_000;
/** Steady traffic after deliveries flow again, before the next fault. */
const TAIL_MS = 5_000;
/** Longest wait, before a fault, for the pipeline to catch up with the one before. */
const SETTLE_TIMEOUT_MS = 120_000;
/** Wait after the drain before the last check of the commits (they gather 200 ms). */
const DRAIN_COMMIT_MS = 5_000;
/** No fault starts past this, so that the whole run ends within about 20 minutes. */
const BUDGET_MS = 15 * 60_000;

interface Settings {
  readonly faults: readonly string[] | 'all';
  readonly rate: number;
  readonly jsonFile?: string;
  readonly kafkaLibs: string;
  readonly serverUrl: string;
}

function settings(argv: readonly string[], env: NodeJS.ProcessEnv): Settings {
  const at = argv.findIndex((a) => a === '--fault' || a.startsWith('--fault='));
  const option =
    at < 0 ? undefined : argv[at].includes('=') ? argv[at].split('=')[1] : argv[at + 1];
  const list = option ?? env.CHAOS_FAULTS ?? 'all';
  return {
    faults: list === 'all' ? 'all' : list.split(',').map((id) => id.trim()),
    rate: Number(env.CHAOS_RATE ?? 150),
    jsonFile: env.CHAOS_JSON,
    kafkaLibs: kafkaLibs(env),
    serverUrl: env.DATABASE_URL ?? 'postgres://sluice:sluice@127.0.0.1:5432/sluice',
  };
}

class ClusterSuite {
  readonly cluster: ChaosCluster;
  private readonly s: Settings;
  private readonly stand: Stand<ChaosCluster, SharedDatabase>;

  constructor(s: Settings) {
    this.s = s;
    this.cluster = new ChaosCluster(ROOT, s.kafkaLibs, BROKER_PORT_BASE);
    this.stand = new Stand(
      'cluster',
      s.kafkaLibs,
      {
        KAFKA_TOPIC_PARTITIONS: '6',
        KAFKA_REPLICATION_FACTOR: '3',
        // Short tiers, so deliveries cycle through them within the fault's minute.
        DISPATCHER_RETRY_DELAYS: '2s,5s,10s',
      },
      // Small heaps: eight apps share the machine with three brokers.
      ['--max-old-space-size=256', '--trace-warnings'],
      {
        kafka: this.cluster,
        database: new SharedDatabase(s.serverUrl, DATABASE),
        replicas: 2,
        apps: { portBase: APP_PORT_BASE, replicaLabels: true },
      },
    );
  }

  async run(): Promise<ChaosReport> {
    const started = Date.now();
    const writeKey = await this.stand.setUp();
    const apps = this.stand.apps;
    let turn = 0;
    // Round robin over the ingest replicas in service, as a load balancer would.
    const ingestUrl = () => {
      const serving = apps.serving('ingest');
      const ingest = serving.length > 0 ? serving : apps.instances('ingest');
      turn += 1;
      return apps.url('ingest', ingest[turn % ingest.length].replica);
    };
    const sender = new Sender(ingestUrl, writeKey, this.s.rate);
    const receiver = this.stand.receiver;
    await firstDelivery(sender, receiver);
    const faults = this.pick(
      clusterFaults({
        cluster: this.cluster,
        apps,
        receiver,
        sender,
        topicPrefix: this.stand.topicPrefix,
      }),
    );
    const phases: PhaseTimes[] = [];
    // Every group's commits against its topics' ends, after each phase's catch-up.
    const commits = new CommitWatch(this.cluster.brokers, this.stand.topicPrefix);
    commits.start();
    sender.start();
    try {
      for (const [index, fault] of faults.entries()) {
        if (Date.now() - started > BUDGET_MS) {
          progress(`time budget spent: ${fault.name} and the faults after it are skipped`);
          break;
        }
        await settled(sender, receiver, LATE_MS, SETTLE_TIMEOUT_MS);
        withNotes(phases, await commits.check('after catching up'));
        sender.phase = index + 1;
        phases.push(await this.phase(sender, fault));
      }
      sender.stop();
      progress('draining: every acknowledged call should arrive');
      await sender.drain(DRAIN_TIMEOUT_MS);
      await drained(sender, receiver);
      // Nothing more comes: every group should have committed everything by now.
      await sleep(DRAIN_COMMIT_MS);
      withNotes(phases, await commits.check('after the drain'));
    } finally {
      await commits.stop();
    }
    if (process.env.CHAOS_LOG_DIR) writeDuplicates(process.env.CHAOS_LOG_DIR, sender, receiver);
    return results(phases, sender, receiver);
  }

  tearDown(): Promise<void> {
    return this.stand.tearDown();
  }

  /** On exit, where nothing can be awaited: the apps and the brokers, at once. */
  killNow(): void {
    this.stand.killNow();
    for (const pid of this.cluster.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  private pick(all: ClusterFault[]): ClusterFault[] {
    if (this.s.faults === 'all') return all;
    const unknown = this.s.faults.filter((id) => !all.some((f) => f.id === id));
    if (unknown.length > 0) {
      const known = all.map((f) => f.id).join(', ');
      throw new Error(`--fault: unknown fault(s) ${unknown.join(', ')}; known: ${known}`);
    }
    return this.s.faults.map((id) => all.find((f) => f.id === id)!);
  }

  /**
   * Steady traffic, the fault, and traffic until deliveries of new calls flow again (the
   * pipeline caught up with the phase before).
   */
  private async phase(sender: Sender, fault: ClusterFault): Promise<PhaseTimes> {
    const apps = this.stand.apps;
    const phaseStart = Date.now();
    progress(fault.name);
    await sleep(LEAD_MS);
    const readiness = new ReadinessWatch(apps);
    readiness.start();
    const faultStart = Date.now();
    const times = await fault.act();
    const recoveredAt = await recovered(sender, this.stand.receiver, times.flowFrom ?? times.end);
    await sleep(TAIL_MS);
    const ready = await readiness.stop();
    for (const { app, replica } of apps.crashed()) {
      progress(`  ${apps.label(app, replica)} stopped by itself; started again`);
      progress(apps.lastOutput(app, replica));
      await apps.start(app, replica);
    }
    return {
      id: fault.id,
      name: fault.name,
      phaseStart,
      faultStart,
      faultEnd: times.end,
      flowFrom: times.flowFrom,
      recoveredAt,
      readiness: ready,
      notes: times.notes,
    };
  }
}

/**
 * Every call that arrived more than once, with its times, into `duplicates.json` beside the
 * apps' logs: which calls a burst of duplicates replayed, to read against the logs.
 */
function writeDuplicates(dir: string, sender: Sender, receiver: Receiver): void {
  const iso = (at: number | undefined) => (at === undefined ? null : new Date(at).toISOString());
  const rows = [...receiver.arrivals]
    .filter(([, arrivals]) => arrivals.at.length > 1)
    .map(([messageId, arrivals]) => {
      const call = sender.calls.get(messageId);
      return {
        messageId,
        createdAt: iso(call?.createdAt),
        ackedAt: iso(call?.ackedAt),
        attempts: call?.attempts,
        arrivals: arrivals.at.map(iso),
      };
    });
  writeFileSync(join(dir, 'duplicates.json'), JSON.stringify(rows, null, 1));
}

/** Adds `notes` to the last phase's (none before the first). */
function withNotes(phases: PhaseTimes[], notes: readonly string[]): void {
  const last = phases.at(-1);
  if (last !== undefined)
    phases[phases.length - 1] = { ...last, notes: [...(last.notes ?? []), ...notes] };
}

const cluster = settings(process.argv, process.env);
const suite = new ClusterSuite(cluster);
runBench({
  supervisor: { killAllNow: () => suite.killNow() },
  stand: suite,
  async run() {
    const report = await suite.run();
    if (cluster.jsonFile) writeFileSync(cluster.jsonFile, JSON.stringify(report, null, 2));
    return clusterResultsTable(report, cluster.rate, suite.cluster.brokers);
  },
});
