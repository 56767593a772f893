import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';

import { AdminConfig } from './config';

/** The admin app. */
@Module({})
export class AppModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return { module: AppModule, imports: [RuntimeModule.forRoot(config)] };
  }
}
