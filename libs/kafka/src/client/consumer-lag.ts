import {
  DynamicModule,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import type { Admin } from 'kafkajs';
import type { Gauge } from 'prom-client';

import { Metrics } from '@app/observability';

import { KafkaConnection } from '../internals/kafka.connection';

/** Name of the gauge: records on a topic that a consumer group has not committed yet. */
export const CONSUMER_LAG_METRIC = 'sluice_consumer_lag_records';

/** Default pause between two reads of the offsets. */
const DEFAULT_REFRESH_INTERVAL_MS = 30_000;

/** A consumer group and the logical topics (before the deployment prefix) it consumes. */
export interface ConsumerGroupTopics {
  /** The group id as the consumer uses it (with the deployment prefix, if any). */
  readonly groupId: string;
  /** Logical topic names, e.g. `TOPIC.calls`; the connection adds the prefix. */
  readonly topics: readonly string[];
}

/** Options of {@link ConsumerLagModule.forRoot}. */
export interface ConsumerLagOptions {
  /** The groups whose lag is exported (usually one: the app's own). */
  readonly groups: readonly ConsumerGroupTopics[];
  /** Pause between two reads of the offsets; 30 s by default. */
  readonly refreshIntervalMs?: number;
}

/** The lag of one group on one topic, summed over the topic's partitions. */
export interface TopicLag {
  readonly groupId: string;
  /** The topic's name on the cluster (with the deployment prefix). */
  readonly topic: string;
  readonly records: number;
}

/** One partition's offsets as the brokers report them (decimal strings, as kafkajs gives). */
export interface PartitionEnds {
  readonly partition: number;
  readonly low: string;
  readonly high: string;
}

/** A group's committed offset of one partition; `-1` when it committed none. */
export interface PartitionCommit {
  readonly partition: number;
  readonly offset: string;
}

/**
 * Records the group has still to consume on one topic: per partition, the high watermark
 * minus the committed offset, summed. A partition without a commit (or one whose commit fell
 * below the log start after retention) counts from the log start, where the group's
 * consumers begin (KafkaTransport subscribes from the beginning).
 */
export function topicLag(
  ends: readonly PartitionEnds[],
  commits: readonly PartitionCommit[],
): number {
  let lag = 0n;
  for (const { partition, low, high } of ends) {
    const start = BigInt(low);
    const committed = BigInt(commits.find((c) => c.partition === partition)?.offset ?? '-1');
    const from = committed > start ? committed : start;
    const end = BigInt(high);
    if (end > from) lag += end - from;
  }
  return Number(lag);
}

/** Reads the lag of consumer groups through a Kafka admin client. */
export class ConsumerLagReader {
  private readonly admin: Admin;

  constructor(
    private readonly connection: KafkaConnection,
    private readonly groups: readonly ConsumerGroupTopics[],
  ) {
    // Few retries: a read that fails is simply tried again at the next refresh.
    this.admin = connection.admin(1);
  }

  async connect(): Promise<void> {
    await this.admin.connect();
  }

  async disconnect(): Promise<void> {
    await this.admin.disconnect();
  }

  /** The lag of every configured group on each of its topics. */
  async read(): Promise<TopicLag[]> {
    const perGroup = await Promise.all(this.groups.map((group) => this.readGroup(group)));
    return perGroup.flat();
  }

  private async readGroup(group: ConsumerGroupTopics): Promise<TopicLag[]> {
    const topics = group.topics.map((name) => this.connection.topic(name));
    const [commits, ends] = await Promise.all([
      this.admin.fetchOffsets({ groupId: group.groupId, topics }),
      Promise.all(topics.map((topic) => this.admin.fetchTopicOffsets(topic))),
    ]);
    return topics.map((topic, i) => ({
      groupId: group.groupId,
      topic,
      records: topicLag(ends[i], commits.find((c) => c.topic === topic)?.partitions ?? []),
    }));
  }
}

/** What {@link ConsumerLagExporter} needs of a reader (a fake in unit specs). */
export type LagSource = Pick<ConsumerLagReader, 'connect' | 'disconnect' | 'read'>;

/**
 * Exports `sluice_consumer_lag_records{group,topic}` through the app's {@link Metrics}: reads
 * the offsets once at start-up and then every `refreshIntervalMs` (not on scrape, so a slow
 * or unreachable cluster never slows `/metrics`). After a failed read the last values stay
 * and the failure is logged once until a read succeeds again.
 */
export class ConsumerLagExporter {
  private readonly logger = new Logger(ConsumerLagExporter.name);
  private readonly gauge: Gauge<'group' | 'topic'>;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly source: LagSource,
    metrics: Metrics,
    private readonly refreshIntervalMs = DEFAULT_REFRESH_INTERVAL_MS,
  ) {
    this.gauge = metrics.gauge(
      CONSUMER_LAG_METRIC,
      'Records on a topic not yet committed by a consumer group, summed over partitions',
      ['group', 'topic'],
    );
  }

  /** Connects and takes the first reading; failures are logged, never thrown. */
  async start(): Promise<void> {
    try {
      await this.source.connect();
    } catch (error) {
      this.logger.warn(`consumer lag: cannot connect the admin client: ${String(error)}`);
    }
    await this.tick();
  }

  /** Stops refreshing, waits for a read in progress, disconnects. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.source.disconnect();
  }

  /** Reads once and sets the gauge. */
  async refresh(): Promise<void> {
    try {
      for (const lag of await this.source.read()) {
        this.gauge.set({ group: lag.groupId, topic: lag.topic }, lag.records);
      }
      if (this.failing) this.logger.log('consumer lag: reading offsets again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`consumer lag: reading offsets failed: ${String(error)}`);
      this.failing = true;
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.running = this.refresh();
    await this.running;
    this.running = undefined;
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.refreshIntervalMs);
    this.timer.unref();
  }
}

const CONSUMER_LAG_OPTIONS = Symbol('CONSUMER_LAG_OPTIONS');

/** Starts the exporter with the app and stops it at shutdown. */
@Injectable()
class ConsumerLagLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly exporter: ConsumerLagExporter) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.exporter.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.exporter.stop();
  }
}

/**
 * Consumer lag as a metric for an app that consumes topics: import
 * `ConsumerLagModule.forRoot({ groups: [{ groupId, topics: [TOPIC.deliveries] }] })` in the
 * app's module. Needs the global {@link KafkaConnection} and {@link Metrics} that
 * `RuntimeModule` provides.
 */
@Module({})
export class ConsumerLagModule {
  static forRoot(options: ConsumerLagOptions): DynamicModule {
    return {
      module: ConsumerLagModule,
      providers: [
        { provide: CONSUMER_LAG_OPTIONS, useValue: options },
        {
          provide: ConsumerLagExporter,
          useFactory: (connection: KafkaConnection, metrics: Metrics, opts: ConsumerLagOptions) =>
            new ConsumerLagExporter(
              new ConsumerLagReader(connection, opts.groups),
              metrics,
              opts.refreshIntervalMs,
            ),
          inject: [KafkaConnection, Metrics, CONSUMER_LAG_OPTIONS],
        },
        ConsumerLagLifecycle,
      ],
      exports: [ConsumerLagExporter],
    };
  }
}
