/**
 * What the cluster stand runs on: a three-node KRaft cluster of its own on fixed loopback ports
 * (each node a broker and a controller, started by docker/local/services.sh with a shared
 * cluster id), and a database of its own in the shared PostgreSQL, made again on every run.
 */
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { withDatabase } from '../common.mts';
import { kafkaClient } from '../kafka.mts';
import { localBroker } from './services.mts';

/** How many nodes the cluster has, and how many in-sync replicas a write needs. */
export const CLUSTER_SIZE = 3;
export const MIN_INSYNC_REPLICAS = 2;

/**
 * How long the controller waits for a silent broker's heartbeat before fencing it and moving
 * its leaders (Kafka's default is 9 s, its heartbeat 2 s): a crashed broker's partitions have
 * no leader until then. Loopback heartbeats are never late, so a short session is safe here;
 * on a real network 6 s with 1.5 s heartbeats is a reasonable floor.
 */
const BROKER_SESSION_TIMEOUT_MS = 4_000;
const BROKER_HEARTBEAT_INTERVAL_MS = 1_000;

/** Three nodes; node n listens on `base + 2(n-1)`, its controller on the port after. */
export class ChaosCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'sluice-chaos-cluster-'));
  readonly nodes = Array.from({ length: CLUSTER_SIZE }, (_, i) => i + 1);
  private readonly clusterId = clusterId();

  private readonly root: string;
  private readonly kafkaLibs: string;
  private readonly base: number;

  constructor(root: string, kafkaLibs: string, base: number) {
    this.root = root;
    this.kafkaLibs = kafkaLibs;
    this.base = base;
  }

  /** The bootstrap list: every node. */
  get brokers(): string {
    return this.nodes.map((node) => `127.0.0.1:${this.port(node)}`).join(',');
  }

  port(node: number): number {
    return this.base + 2 * (node - 1);
  }

  /** Starts every node at once (a node answers only once a quorum of voters is up). */
  async start(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.startNode(node)));
  }

  /**
   * With CHAOS_LOG_DIR set, each node's own log (warnings and errors) is kept there as
   * `broker-<node>.log`, every run of the node appended: a start overwrites `kafka.out`.
   */
  private keepLog(node: number): void {
    const dir = process.env.CHAOS_LOG_DIR;
    const log = join(this.nodeDir(node), 'kafka', 'logs', 'kafka.out');
    if (!dir || !existsSync(log)) return;
    appendFileSync(join(dir, `broker-${node}.log`), readFileSync(log));
  }

  /** Starts a node (again); resolves once it answers. Its data survives a stop. */
  async startNode(node: number): Promise<void> {
    this.keepLog(node);
    const extra = join(this.dir, `node-${node}.properties`);
    writeFileSync(extra, this.properties(node));
    await localBroker(this.root, 'up', this.nodeDir(node), this.port(node), this.kafkaLibs, {
      SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES: extra,
      SLUICE_LOCAL_KAFKA_CLUSTER_ID: this.clusterId,
    });
  }

  /** SIGKILL: the node stops at once, as a crashed machine would. */
  killNode(node: number): void {
    const pidFile = join(this.nodeDir(node), 'kafka', 'kafka.pid');
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    rmSync(pidFile, { force: true });
  }

  /** A graceful stop (SIGTERM: the broker hands its leaders over first). */
  stopNode(node: number): Promise<void> {
    return localBroker(this.root, 'down', this.nodeDir(node), this.port(node), this.kafkaLibs);
  }

  /** The process ids of the running nodes (for the last-resort kill on exit). */
  pids(): number[] {
    return this.nodes.flatMap((node) => {
      try {
        const pidFile = join(this.nodeDir(node), 'kafka', 'kafka.pid');
        return [Number(readFileSync(pidFile, 'utf8').trim())];
      } catch {
        return [];
      }
    });
  }

  /**
   * The node that leads the most partitions of the topics `match` picks (ties: the lowest id),
   * asked of the nodes other than `exclude`.
   */
  async mostLeader(match: (topic: string) => boolean, exclude: number[] = []): Promise<number> {
    const bootstrap = this.nodes.filter((n) => !exclude.includes(n));
    const admin = kafkaClient(bootstrap.map((n) => `127.0.0.1:${this.port(n)}`).join(',')).admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter(match);
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      const counts = new Map<number, number>();
      for (const p of metadata.flatMap((t) => t.partitions)) {
        if (!exclude.includes(p.leader)) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
      }
      const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      if (sorted.length === 0) throw new Error('no partition has a leader');
      return sorted[0][0];
    } finally {
      await admin.disconnect();
    }
  }

  /** Stops every node and removes their data. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.stopNode(node).catch(() => undefined)));
    for (const node of this.nodes) this.keepLog(node);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private nodeDir(node: number): string {
    return join(this.dir, `node-${node}`);
  }

  /** What each node adds to the script's single-node properties (a key given again wins). */
  private properties(node: number): string {
    const voters = this.nodes.map((n) => `${n}@127.0.0.1:${this.port(n) + 1}`).join(',');
    return [
      `node.id=${node}`,
      `controller.quorum.voters=${voters}`,
      `default.replication.factor=${CLUSTER_SIZE}`,
      `min.insync.replicas=${MIN_INSYNC_REPLICAS}`,
      `offsets.topic.replication.factor=${CLUSTER_SIZE}`,
      `transaction.state.log.replication.factor=${CLUSTER_SIZE}`,
      `transaction.state.log.min.isr=${MIN_INSYNC_REPLICAS}`,
      `share.coordinator.state.topic.replication.factor=${CLUSTER_SIZE}`,
      `share.coordinator.state.topic.min.isr=${MIN_INSYNC_REPLICAS}`,
      `broker.session.timeout.ms=${BROKER_SESSION_TIMEOUT_MS}`,
      `broker.heartbeat.interval.ms=${BROKER_HEARTBEAT_INTERVAL_MS}`,
      // Leaders move back to their preferred replica soon after a node returns.
      'leader.imbalance.check.interval.seconds=10',
      '',
    ].join('\n');
  }
}

/** A database of the stand's own in the shared PostgreSQL, dropped and made again each run. */
export class SharedDatabase {
  private readonly serverUrl: string;
  private readonly name: string;

  /** @param serverUrl a database URL of the shared server whose role may create databases */
  constructor(serverUrl: string, name: string) {
    this.serverUrl = serverUrl;
    this.name = name;
  }

  get url(): string {
    const url = new URL(this.serverUrl);
    url.pathname = `/${this.name}`;
    return url.toString();
  }

  async create(): Promise<void> {
    await this.destroy();
    await withDatabase(this.serverUrl, (db) => db.query(`CREATE DATABASE "${this.name}"`));
  }

  async destroy(): Promise<void> {
    await withDatabase(this.serverUrl, (db) =>
      db.query(`DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`),
    );
  }
}

/** A Kafka cluster id (16 random bytes, base64url) that does not start with `-`. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
