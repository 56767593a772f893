import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';

import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';

import { retryTopic, TOPIC } from '@app/contracts';
import { ConsumerLagModule } from '@app/kafka';
import { RuntimeModule } from '@app/runtime';
import { SecretBox } from '@app/signing';

import { DispatcherConfig, retryTiers } from './config';
import { DeliveriesConsumer } from './delivery/deliveries.consumer';
import { DISPATCH_OPTIONS, DispatchOptions, DispatchService } from './delivery/dispatch.service';
import { DispatcherMetrics } from './delivery/dispatcher.metrics';
import { SsrfGuard } from './delivery/ssrf-guard';
import { WebhookClient } from './delivery/webhook-client';

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
    // An extra CA file adds to the default trust (system roots and NODE_EXTRA_CA_CERTS).
    ca: extraCa === undefined ? undefined : [...getCACertificates('default'), extraCa],
  });
}

/** The dispatcher's consumer groups: one for the main topic, one for the retry tiers. */
export function dispatcherGroupIds(config: DispatcherConfig): { main: string; retries: string } {
  const prefix = config.kafka.topicPrefix;
  return { main: `${prefix}sluice-dispatcher`, retries: `${prefix}sluice-dispatcher-retry` };
}

/**
 * How long the dispatcher's producer gathers records before a request. It produces retries,
 * dead letters and outcomes one at a time; a destination that fails or hangs sends hundreds a
 * second to the retry tier, and a request per one or two of them cost that traffic more CPU
 * than the deliveries of the healthy destinations beside it (bench/DISPATCHER.md, (b)).
 * Retries wait 10 s or more anyway; nobody waits on a dead letter or an outcome by the
 * millisecond.
 */
const PRODUCE_LINGER_MS = 10;

/** The dispatcher app: deliveries and retry tiers in; signed POSTs, retries and dead letters out. */
@Module({})
export class AppModule {
  static forRoot(config: DispatcherConfig): DynamicModule {
    const { dispatcher } = config;
    const tiers = retryTiers(config).map(retryTopic);
    const groups = dispatcherGroupIds(config);
    const options: DispatchOptions = {
      retryDelaysSeconds: dispatcher.retryDelaysSeconds,
      retryWindowMs: dispatcher.retryWindowMs,
      maxInFlight: dispatcher.maxInFlight,
      maxInFlightPerDestination: dispatcher.maxInFlightPerDestination,
      failingAfter: dispatcher.failingAfter,
      destinationWaitMs: dispatcher.destinationWaitMs,
      secrets: new SecretBox(dispatcher.secretsKey),
      ledgerSuccessSample: dispatcher.ledgerSuccessSample,
    };
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          extraTopics: tiers,
          producer: { lingerMs: PRODUCE_LINGER_MS },
        }),
        // sluice_consumer_lag_records{group,topic}: what KEDA scales the dispatcher on.
        ConsumerLagModule.forRoot({
          groups: [
            { groupId: groups.main, topics: [TOPIC.deliveries] },
            { groupId: groups.retries, topics: tiers },
          ],
        }),
      ],
      providers: [
        DeliveriesConsumer,
        DispatchService,
        DispatcherMetrics,
        WebhookClientCloser,
        { provide: DISPATCH_OPTIONS, useValue: options },
        { provide: WebhookClient, useFactory: () => createWebhookClient(config) },
      ],
    };
  }
}
