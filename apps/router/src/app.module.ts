import { DynamicModule, Module } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { ConsumerLagModule } from '@app/kafka';
import { RuntimeModule } from '@app/runtime';

import { RouterConfig } from './config';
import { CallsConsumer } from './routing/calls.consumer';
import { RouterMetrics } from './routing/router.metrics';
import { RoutingService } from './routing/routing.service';

/** The router's consumer group on `sluice.calls.v1` (the deployment prefix keeps them apart). */
export function routerGroupId(config: RouterConfig): string {
  return `${config.kafka.topicPrefix}sluice-router`;
}

/** The router app: calls in, one delivery per (call, destination) out. */
@Module({})
export class AppModule {
  static forRoot(config: RouterConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config),
        // sluice_consumer_lag_records{group,topic}: what KEDA scales the router on.
        ConsumerLagModule.forRoot({
          groups: [{ groupId: routerGroupId(config), topics: [TOPIC.calls] }],
        }),
      ],
      providers: [CallsConsumer, RoutingService, RouterMetrics],
    };
  }
}
