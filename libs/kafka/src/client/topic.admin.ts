import { setTimeout as sleep } from 'node:timers/promises';

import { Logger } from '@nestjs/common';
import { Admin } from 'kafkajs';

import { KafkaSecurityError } from '../internals/kafka-security';
import { KafkaConnection } from '../internals/kafka.connection';
import { TopicSpec } from './topic-specs';

/** Tries of `ensureTopics`, and the pause after the first failed one (growing linearly). */
const ENSURE_ATTEMPTS = 10;
const ENSURE_PAUSE_MS = 200;

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

  /**
   * The first connection of an app: a TLS or SASL failure stops start-up with a clear error.
   * One attempt without retries goes first: such a failure stops start-up then, before
   * kafkajs logs a line per retry; a broker that is not up yet gets the clients' retries.
   */
  async connect(): Promise<void> {
    try {
      const first = await this.connection.connectOnce().then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      if (first && this.connection.explain(first.error) instanceof KafkaSecurityError) {
        throw first.error;
      }
      await Promise.all([this.admin.connect(), this.probe.connect()]);
    } catch (error) {
      throw this.connection.explain(error);
    }
  }

  async disconnect(): Promise<void> {
    await Promise.all([this.admin.disconnect(), this.probe.disconnect()]);
  }

  /**
   * Creates the topics that do not exist yet (idempotent; existing topics keep their
   * partitions and configuration), then waits until every partition of them has a leader
   * that serves it. A freshly created topic can be briefly unknown to the broker answering
   * metadata requests, and a partition's leader can be named in metadata a moment before it
   * answers for the partition (`NOT_LEADER_OR_FOLLOWER`); such retriable errors are retried
   * with a growing pause, 10 times at most.
   */
  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.createMissing(specs);
        await this.awaitLeaders(specs.map((spec) => this.connection.topic(spec.name)));
        return;
      } catch (error) {
        if (attempt >= ENSURE_ATTEMPTS || !(error as { retriable?: boolean }).retriable)
          throw error;
        this.logger.warn(`topics not ready yet (attempt ${attempt}): ${String(error)}`);
        await sleep(ENSURE_PAUSE_MS * attempt);
      }
    }
  }

  private async createMissing(specs: readonly TopicSpec[]): Promise<void> {
    const existing = new Set(await this.admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(this.connection.topic(spec.name)));
    if (missing.length === 0) return;
    await this.admin.createTopics({
      waitForLeaders: false,
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

  private async awaitLeaders(topics: readonly string[]): Promise<void> {
    const { topics: metadata } = await this.admin.fetchTopicMetadata({ topics: [...topics] });
    const leaderless = metadata.filter((t) => t.partitions.some((p) => p.leader < 0));
    if (leaderless.length > 0) {
      throw Object.assign(
        new Error(`no leader yet for ${leaderless.map((t) => t.name).join(', ')}`),
        {
          retriable: true,
        },
      );
    }
    // Asking each leader for its offsets proves it serves the partition.
    await Promise.all(topics.map((topic) => this.offsetsServed(topic)));
  }

  /**
   * Asks the leaders for a topic's offsets. kafkajs 2.2.4 throws a TypeError when no broker
   * answered for the topic yet (on a cluster, a broker that has not learned of a new topic):
   * that is "not ready yet", tried again like the broker's own answers of that kind.
   */
  private async offsetsServed(topic: string): Promise<void> {
    try {
      await this.admin.fetchTopicOffsets(topic);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      throw Object.assign(new Error(`no offsets answered yet for ${topic}`), { retriable: true });
    }
  }

  /**
   * Resolves when a broker answers a metadata request; the probe client does not retry, and
   * callers bound the wait (readiness checks do).
   */
  async ping(): Promise<void> {
    await this.probe.describeCluster();
  }
}
