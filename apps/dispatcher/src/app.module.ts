import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';

import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';

import { retryTopic } from '@app/contracts';
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

/** The dispatcher app: deliveries and retry tiers in; signed POSTs, retries and dead letters out. */
@Module({})
export class AppModule {
  static forRoot(config: DispatcherConfig): DynamicModule {
    const { dispatcher } = config;
    const options: DispatchOptions = {
      retryDelaysSeconds: dispatcher.retryDelaysSeconds,
      retryWindowMs: dispatcher.retryWindowMs,
      maxInFlight: dispatcher.maxInFlight,
      maxInFlightPerDestination: dispatcher.maxInFlightPerDestination,
      failingAfter: dispatcher.failingAfter,
      secrets: new SecretBox(dispatcher.secretsKey),
    };
    return {
      module: AppModule,
      imports: [RuntimeModule.forRoot(config, { extraTopics: retryTiers(config).map(retryTopic) })],
      controllers: [DeliveriesConsumer],
      providers: [
        DispatchService,
        DispatcherMetrics,
        WebhookClientCloser,
        { provide: DISPATCH_OPTIONS, useValue: options },
        { provide: WebhookClient, useFactory: () => createWebhookClient(config) },
      ],
    };
  }
}
