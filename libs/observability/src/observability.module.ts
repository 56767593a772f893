import { DynamicModule, FactoryProvider, Module } from '@nestjs/common';

import { HEALTH_CHECKS, HealthCheck } from './health';
import { Metrics } from './metrics';
import { ObservabilityController } from './observability.controller';
import { ReadinessService } from './readiness.service';

/** Options of {@link ObservabilityModule.forRoot}. */
export interface ObservabilityOptions {
  /** The app's name, a label on every metric. */
  readonly app: string;
  /** Provides the app's health checks under {@link HEALTH_CHECKS}. */
  readonly healthChecks: Omit<FactoryProvider<HealthCheck[]>, 'provide'>;
}

/** Health endpoints, the metrics registry and `/metrics` for one app. */
@Module({})
export class ObservabilityModule {
  static forRoot(options: ObservabilityOptions): DynamicModule {
    return {
      module: ObservabilityModule,
      global: true,
      controllers: [ObservabilityController],
      providers: [
        { provide: Metrics, useValue: new Metrics(options.app) },
        { ...options.healthChecks, provide: HEALTH_CHECKS },
        ReadinessService,
      ],
      exports: [Metrics],
    };
  }
}
