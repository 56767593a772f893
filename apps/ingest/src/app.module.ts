import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';

import { IngestConfig } from './config';

/** The ingest app. */
@Module({})
export class AppModule {
  static forRoot(config: IngestConfig): DynamicModule {
    return { module: AppModule, imports: [RuntimeModule.forRoot(config)] };
  }
}
