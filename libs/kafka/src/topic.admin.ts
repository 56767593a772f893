import { Logger } from '@nestjs/common';
import { Admin } from 'kafkajs';

import { KafkaConnection } from './kafka.connection';
import { TopicSpec } from './kafka.options';

/** Longest a readiness probe waits for the cluster to answer. */
const PING_TIMEOUT_MS = 2_000;

/** Creates topics and answers whether the cluster is reachable. */
export class TopicAdmin {
  private readonly logger = new Logger(TopicAdmin.name);
  private readonly admin: Admin;
  private readonly probe: Admin;

  constructor(private readonly connection: KafkaConnection) {
    this.admin = connection.admin();
    // Probes fail fast: a readiness check must not hang on retries.
    this.probe = connection.admin(0);
  }

  async connect(): Promise<void> {
    await Promise.all([this.admin.connect(), this.probe.connect()]);
  }

  async disconnect(): Promise<void> {
    await Promise.all([this.admin.disconnect(), this.probe.disconnect()]);
  }

  /**
   * Creates the topics that do not exist yet (idempotent; existing topics keep their
   * partitions and configuration).
   */
  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    const existing = new Set(await this.admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(this.connection.topic(spec.name)));
    if (missing.length === 0) return;
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((spec) => ({
        topic: this.connection.topic(spec.name),
        numPartitions: spec.partitions,
        replicationFactor: spec.replicationFactor,
        configEntries: [{ name: 'retention.ms', value: String(spec.retentionMs) }],
      })),
    });
    this.logger.log(
      `created topics: ${missing.map((s) => this.connection.topic(s.name)).join(', ')}`,
    );
  }

  /** Resolves when a broker answers a metadata request within two seconds. */
  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Kafka did not answer in time')), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.probe.describeCluster(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
