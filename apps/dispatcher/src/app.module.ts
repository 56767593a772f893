import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { getCACertificates } from 'node:tls';

import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';

import { BatchProducer, ConsumerLagModule, lagGroups } from '@app/kafka';
import { Metrics } from '@app/observability';
import { RuntimeModule } from '@app/runtime';
import { SettingsCache } from '@app/settings';
import { SecretBox } from '@app/signing';

import { DispatcherConfig } from './config';
import { BreakerObserver } from './delivery/breaker-observer';
import { DeliveriesConsumer } from './delivery/deliveries.consumer';
import { DISPATCH_OPTIONS, DispatchOptions, DispatchService } from './delivery/dispatch.service';
import { DispatcherMetrics } from './delivery/dispatcher.metrics';
import {
  DestinationRateLimits,
  RATE_LIMIT_OPTIONS,
  RateLimitOptions,
} from './delivery/rate-limits.service';
import { SsrfGuard } from './delivery/ssrf-guard';
import { WebhookClient } from './delivery/webhook-client';
import { dispatcherKafka } from './kafka-topology';

/** Closes the webhook client's connections when the app stops. */
class WebhookClientCloser implements OnApplicationShutdown {
  constructor(@Inject(WebhookClient) private readonly client: WebhookClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/** The webhook client the configuration describes. */
export function createWebhookClient(config: DispatcherConfig): WebhookClient {
  const { dispatcher } = config;
  const extraCa =
    dispatcher.extraCaFile === '' ? undefined : readFileSync(dispatcher.extraCaFile, 'utf8');
  return new WebhookClient({
    timeoutMs: dispatcher.requestTimeoutMs,
    connectionsPerOrigin: dispatcher.connectionsPerOrigin,
    guard: new SsrfGuard(dispatcher.allowedCidrs),
    responseBodyBytes: dispatcher.responseBodyBytes,
    // An extra CA file adds to the default trust (system roots and NODE_EXTRA_CA_CERTS).
    ca: extraCa === undefined ? undefined : [...getCACertificates('default'), extraCa],
  });
}

/** The dispatcher app: deliveries and retry tiers in; signed POSTs, retries and dead letters out. */
@Module({})
export class AppModule {
  static forRoot(config: DispatcherConfig): DynamicModule {
    const { dispatcher } = config;
    const kafka = dispatcherKafka(config);
    const options: DispatchOptions = {
      retryDelaysSeconds: dispatcher.retryDelaysSeconds,
      retryWindowMs: dispatcher.retryWindowMs,
      maxInFlight: dispatcher.maxInFlight,
      maxPendingCalls: dispatcher.maxPendingCalls,
      maxInFlightPerDestination: dispatcher.maxInFlightPerDestination,
      breaker: dispatcher.breaker,
      destinationWaitMs: dispatcher.destinationWaitMs,
      secrets: new SecretBox(dispatcher.secretsKey),
      ledgerSuccessSample: dispatcher.ledgerSuccessSample,
      orderingRetryDelaysMs: dispatcher.orderingRetryDelaysMs,
    };
    const rateLimits: RateLimitOptions = {
      partitionsPerTopic: config.kafka.topicPartitions,
      groups: Object.values(kafka.consumers).map((consumer) => consumer.topics),
    };
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          extraTopics: kafka.extraTopics,
          producer: kafka.producer,
        }),
        // sluice_consumer_lag_records{group,topic}: what KEDA scales the dispatcher on.
        ConsumerLagModule.forRoot({ groups: lagGroups(kafka) }),
      ],
      providers: [
        DeliveriesConsumer,
        DispatchService,
        DispatcherMetrics,
        {
          provide: BreakerObserver,
          inject: [Metrics, BatchProducer, SettingsCache],
          useFactory: (metrics: Metrics, producer: BatchProducer, settings: SettingsCache) =>
            new BreakerObserver(
              metrics,
              { producer, replica: `${hostname()}-${process.pid}`, now: Date.now },
              (destinationId) => settings.destination(destinationId)?.enabled === true,
            ),
        },
        DestinationRateLimits,
        WebhookClientCloser,
        { provide: RATE_LIMIT_OPTIONS, useValue: rateLimits },
        { provide: DISPATCH_OPTIONS, useValue: options },
        { provide: WebhookClient, useFactory: () => createWebhookClient(config) },
      ],
    };
  }
}
