import { DynamicModule, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { RuntimeModule } from '@app/runtime';
import { addUsage } from '@app/settings';

import { IngestConfig } from './config';
import { IngressConsumer } from './kafka-ingress/ingress.consumer';
import { ingestKafka } from './kafka-topology';
import { IngestMetrics } from './tracking/ingest.metrics';
import { TrackingService } from './tracking/tracking.service';
import { UsageCounter } from './usage/usage.counter';
import { UsageFlusher } from './usage/usage.flusher';

/** The ingest app: the tracking API and the Kafka ingress. */
@Module({})
export class AppModule {
  static forRoot(config: IngestConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          producer: ingestKafka(config).producer,
          // The tracking API works with Kafka and the settings cache alone; the Kafka ingress
          // consumer joining or PostgreSQL away shows as degraded.
          readiness: { database: false, consumers: false },
        }),
      ],
      providers: [
        IngressConsumer,
        TrackingService,
        IngestMetrics,
        {
          provide: UsageCounter,
          useFactory: (dataSource: DataSource) =>
            new UsageCounter((counts) => addUsage(dataSource, counts)),
          inject: [DataSource],
        },
        {
          provide: UsageFlusher,
          useFactory: (counter: UsageCounter) =>
            new UsageFlusher(counter, config.ingest.usageFlushIntervalMs),
          inject: [UsageCounter],
        },
      ],
    };
  }
}
