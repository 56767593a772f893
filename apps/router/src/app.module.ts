import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';

import { RouterConfig } from './config';
import { CallsConsumer } from './routing/calls.consumer';
import { RouterMetrics } from './routing/router.metrics';
import { RoutingService } from './routing/routing.service';

/** The router app: calls in, one delivery per (call, destination) out. */
@Module({})
export class AppModule {
  static forRoot(config: RouterConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [RuntimeModule.forRoot(config)],
      controllers: [CallsConsumer],
      providers: [RoutingService, RouterMetrics],
    };
  }
}
