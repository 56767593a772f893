import { DynamicModule, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { CommonConfig } from '@app/config';
import { TOPIC } from '@app/contracts';
import { BatchProducerOptions, KafkaModule, TopicAdmin, topicSpecs } from '@app/kafka';
import { HealthCheck, ObservabilityModule } from '@app/observability';
import { pingDatabase, SettingsModule } from '@app/settings';

/** The health checks every app answers `/health/ready` with: Kafka and PostgreSQL, for real. */
export function standardHealthChecks(admin: TopicAdmin, dataSource: DataSource): HealthCheck[] {
  return [
    { name: 'kafka', check: () => admin.ping() },
    {
      name: 'postgres',
      check: async () => {
        const ping = await pingDatabase(dataSource);
        if (!ping.ok) throw new Error(ping.reason);
      },
    },
  ];
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
   */
  static forRoot(
    config: CommonConfig,
    options: { extraTopics?: readonly string[]; producer?: Partial<BatchProducerOptions> } = {},
  ): DynamicModule {
    const extraTopics = options.extraTopics ?? [];
    const { kafka, database } = config;
    return {
      module: RuntimeModule,
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
          healthChecks: { useFactory: standardHealthChecks, inject: [TopicAdmin, DataSource] },
        }),
      ],
    };
  }
}
