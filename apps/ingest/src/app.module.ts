import { DynamicModule, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { RuntimeModule } from '@app/runtime';
import { addUsage } from '@app/settings';

import { IngestConfig } from './config';
import { IngressConsumer } from './kafka-ingress/ingress.consumer';
import { IngestMetrics } from './tracking/ingest.metrics';
import { TrackingService } from './tracking/tracking.service';
import { UsageCounter } from './usage/usage.counter';
import { UsageFlusher } from './usage/usage.flusher';

/**
 * Produce requests in flight at once. With one, a request that arrived while one was in
 * flight waited for it and then for its own, and ingest sat idle part of the time under load
 * (bench/README.md, "Where ingest's time goes"). Concurrent HTTP requests have no order to
 * keep; a client that waits for one answer before its next call still has its calls stored
 * in order.
 */
const PRODUCE_REQUESTS_IN_FLIGHT = 2;

/** The ingest app: the tracking API and the Kafka ingress. */
@Module({})
export class AppModule {
  static forRoot(config: IngestConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          producer: {
            sendTimeoutMs: config.ingest.produceTimeoutMs,
            requestsInFlight: PRODUCE_REQUESTS_IN_FLIGHT,
            lingerMs: config.ingest.produceLingerMs,
          },
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
