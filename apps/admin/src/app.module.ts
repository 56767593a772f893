import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';
import { SecretBox } from '@app/signing';

import { ADMIN_TOKENS } from './auth/admin-token.guard';
import { AdminConfig } from './config';
import { DestinationsController } from './destinations/destinations.controller';
import { DestinationsService } from './destinations/destinations.service';
import { SourcesController } from './sources/sources.controller';
import { SourcesService } from './sources/sources.service';

/** The admin app: the control plane's REST API. */
@Module({})
export class AppModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [RuntimeModule.forRoot(config)],
      controllers: [SourcesController, DestinationsController],
      providers: [
        SourcesService,
        DestinationsService,
        { provide: SecretBox, useValue: new SecretBox(config.admin.secretsKey) },
        { provide: ADMIN_TOKENS, useValue: config.admin.tokens },
      ],
    };
  }
}
