import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';

import { DispatcherConfig } from './config';

/** The dispatcher app. */
@Module({})
export class AppModule {
  static forRoot(config: DispatcherConfig): DynamicModule {
    return { module: AppModule, imports: [RuntimeModule.forRoot(config)] };
  }
}
