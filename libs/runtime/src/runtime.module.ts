import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { CommonConfig } from '@app/config';
import { TOPIC } from '@app/contracts';
import {
  BatchProducerOptions,
  ConsumerHealth,
  KafkaConnection,
  KafkaModule,
  KafkaTransportOptions,
  TopicAdmin,
  topicSpecs,
} from '@app/kafka';
import { HealthCheck, ObservabilityModule } from '@app/observability';
import { pingDatabase, SettingsCache, SettingsModule } from '@app/settings';
import { TracingLifecycle } from '@app/tracing';

/**
 * What an app needs, beyond Kafka and its settings cache, to do its job now. What it does not
 * need still shows in `/health/ready` and `sluice_dependency_up`, as `degraded`.
 */
export interface ReadinessNeeds {
  /** PostgreSQL answering (the admin API); the others work from their settings cache. */
  readonly database: boolean;
  /** Every consumer group joined and consuming (the router and the dispatcher). */
  readonly consumers: boolean;
}

const DEFAULT_NEEDS: ReadinessNeeds = { database: false, consumers: true };

/**
 * The checks of an app's `/health/ready`: Kafka answering and the settings cache loaded, always
 * required; PostgreSQL and the consumers as `needs` says.
 */
export function standardHealthChecks(
  admin: TopicAdmin,
  dataSource: DataSource,
  cache: SettingsCache,
  consumers: ConsumerHealth,
  needs: ReadinessNeeds = DEFAULT_NEEDS,
): HealthCheck[] {
  return [
    { name: 'kafka', check: () => admin.ping() },
    {
      name: 'settings',
      check: () =>
        cache.version > 0 ? Promise.resolve() : Promise.reject(new Error('not loaded yet')),
    },
    {
      name: 'postgres',
      required: needs.database,
      check: async () => {
        const ping = await pingDatabase(dataSource);
        if (!ping.ok) throw new Error(ping.reason);
      },
    },
    {
      name: 'consumers',
      required: needs.consumers,
      check: () => {
        const idle = consumers.notConsuming();
        if (idle.length === 0) return Promise.resolve();
        const states = idle.map((c) => `${c.groupId} ${c.state}`).join(', ');
        return Promise.reject(new Error(`not consuming: ${states}`));
      },
    },
  ];
}

/** Share of the app's shutdown timeout a consumer may spend draining at close. */
const CLOSE_SHARE_OF_SHUTDOWN = 2 / 3;

/**
 * The options every {@link KafkaTransport} of an app shares: the connection, the group
 * membership settings of the configuration, the app's {@link ConsumerHealth}, and a drain at
 * close bounded well within the shutdown timeout (so the commits and the leave still happen).
 */
export function transportSettings(
  app: INestApplicationContext,
  config: CommonConfig,
): Pick<
  KafkaTransportOptions,
  | 'connection'
  | 'health'
  | 'sessionTimeoutMs'
  | 'heartbeatIntervalMs'
  | 'rebalanceTimeoutMs'
  | 'closeTimeoutMs'
> {
  return {
    connection: app.get(KafkaConnection),
    health: app.get(ConsumerHealth),
    ...config.kafka.consumer,
    closeTimeoutMs: Math.floor(config.shutdownTimeoutMs * CLOSE_SHARE_OF_SHUTDOWN),
  };
}

/**
 * What every app's process has: JSON logs are set up at creation (see `startHttpApp`); this
 * module adds health and metrics endpoints, the Kafka producer and admin (creating the
 * topics at start-up), and the settings DataSource and cache.
 */
@Module({})
export class RuntimeModule {
  /**
   * @param config the app's typed configuration
   * @param options.extraTopics logical topic names beyond the fixed ones (retry tiers)
   * @param options.producer settings of the app's BatchProducer
   * @param options.readiness what `/health/ready` requires beyond Kafka and the settings cache
   */
  static forRoot(
    config: CommonConfig,
    options: {
      extraTopics?: readonly string[];
      producer?: Partial<BatchProducerOptions>;
      readiness?: ReadinessNeeds;
    } = {},
  ): DynamicModule {
    const extraTopics = options.extraTopics ?? [];
    const { kafka, database } = config;
    return {
      module: RuntimeModule,
      // Exports the app's last spans at close (nothing when its traces are off).
      providers: [{ provide: TracingLifecycle, useValue: new TracingLifecycle(config.app) }],
      imports: [
        KafkaModule.forRoot({
          connection: {
            brokers: kafka.brokers,
            clientId: kafka.clientId,
            topicPrefix: kafka.topicPrefix,
            tls: kafka.tls,
            sasl: kafka.sasl,
          },
          topics: topicSpecs([...Object.values(TOPIC), ...extraTopics], {
            partitions: kafka.topicPartitions,
            replicationFactor: kafka.replicationFactor,
            retentionMs: kafka.retentionMs,
          }),
          producer: options.producer,
        }),
        SettingsModule.forRoot({
          database: {
            url: database.url,
            poolSize: database.poolSize,
            applicationName: `sluice-${config.app}`,
          },
          cache: { refreshIntervalMs: database.refreshIntervalMs },
        }),
        ObservabilityModule.forRoot({
          app: config.app,
          healthChecks: {
            useFactory: (
              admin: TopicAdmin,
              dataSource: DataSource,
              cache: SettingsCache,
              consumers: ConsumerHealth,
            ) => standardHealthChecks(admin, dataSource, cache, consumers, options.readiness),
            inject: [TopicAdmin, DataSource, SettingsCache, ConsumerHealth],
          },
        }),
      ],
    };
  }
}
