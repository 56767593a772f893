import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { randomPorts } from './ports';
import { localBroker } from './spare-broker';

/** How many brokers the cluster has, and how many in-sync replicas a write needs. */
export const CLUSTER_SIZE = 3;
export const MIN_INSYNC_REPLICAS = 2;

/**
 * A three-node KRaft cluster of a test's own on loopback ports, each node a broker and a
 * controller (a quorum of three voters), started through the project's local-services script:
 * topics default to replication factor 3 and `min.insync.replicas=2`, as docs/operations.md
 * recommends for production. A node can be killed (SIGKILL) and started again; its data
 * survives.
 */
export class KafkaCluster {
  private readonly dir = mkdtempSync(join(tmpdir(), 'sluice-kafka-cluster-'));
  /** Node n (1-based) listens on `base + 2(n-1)`, its controller on the port after. */
  private readonly base = randomPorts(2 * CLUSTER_SIZE);
  private readonly clusterId = clusterId();
  readonly nodes = Array.from({ length: CLUSTER_SIZE }, (_, i) => i + 1);

  /** The bootstrap list: every node. */
  get brokers(): string {
    return this.nodes.map((node) => `127.0.0.1:${this.port(node)}`).join(',');
  }

  port(node: number): number {
    return this.base + 2 * (node - 1);
  }

  /** The node listening on a port, from a `host:port` address. */
  nodeAt(address: string): number {
    return this.nodes.find((node) => address.endsWith(`:${this.port(node)}`))!;
  }

  /** Starts every node at once (a node is ready only once a quorum of voters is up). */
  async start(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.startNode(node)));
  }

  /** Starts a node again (idempotent); resolves once it answers. */
  async startNode(node: number): Promise<void> {
    const dir = this.nodeDir(node);
    const extra = join(this.dir, `node-${node}.properties`);
    writeFileSync(extra, this.properties(node));
    await localBroker('up', dir, this.port(node), {
      SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES: extra,
      SLUICE_LOCAL_KAFKA_CLUSTER_ID: this.clusterId,
    });
  }

  /** SIGKILL: the node stops at once, as a crashed machine would. */
  killNode(node: number): void {
    const pid = Number(readFileSync(join(this.nodeDir(node), 'kafka', 'kafka.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
  }

  /** Stops a node gracefully (the script's `down`: SIGTERM, then SIGKILL after 30 s). */
  stopNode(node: number): Promise<void> {
    return localBroker('down', this.nodeDir(node), this.port(node));
  }

  /** Stops every node and removes their data. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.stopNode(node).catch(() => undefined)));
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
      // Leaders move back to their preferred replica soon after a node returns.
      'leader.imbalance.check.interval.seconds=10',
      '',
    ].join('\n');
  }
}

/** A Kafka cluster id (16 random bytes, base64url) that does not start with `-`, as Kafka's own. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
