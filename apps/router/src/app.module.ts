import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';

import { RouterConfig } from './config';

/** The router app. */
@Module({})
export class AppModule {
  static forRoot(config: RouterConfig): DynamicModule {
    return { module: AppModule, imports: [RuntimeModule.forRoot(config)] };
  }
}
