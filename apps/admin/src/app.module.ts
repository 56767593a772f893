import { DynamicModule, Module } from '@nestjs/common';

import { RuntimeModule } from '@app/runtime';
import { SecretBox } from '@app/signing';

import { AdminMetrics } from './admin.metrics';
import { AudiencesController } from './audiences/audiences.controller';
import { AudiencesService } from './audiences/audiences.service';
import { ComputedTraitsController } from './audiences/computed-traits.controller';
import { SyncsService } from './audiences/syncs.service';
import { ADMIN_TOKENS } from './auth/admin-token.guard';
import { CLOCK, SYSTEM_CLOCK } from './clock';
import { AdminConfig } from './config';
import { DeletionsController } from './deletions/deletions.controller';
import { DeletionsService } from './deletions/deletions.service';
import { OutcomesConsumer } from './deletions/outcomes.consumer';
import { ReceiptsService } from './deletions/receipts.service';
import { DestinationsController } from './destinations/destinations.controller';
import { DestinationsService } from './destinations/destinations.service';
import {
  Housekeeping,
  HOUSEKEEPING_OPTIONS,
  republishAfterMs,
  SYNC_EXPIRY_MS,
} from './housekeeping';
import { SourcesController } from './sources/sources.controller';
import { SourcesService } from './sources/sources.service';

/**
 * The admin app: the control plane's REST API, and the consumer of delivery outcomes that
 * records the receipts of delete notifications.
 */
@Module({})
export class AppModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          producer: { sendTimeoutMs: config.admin.produceTimeoutMs },
        }),
      ],
      controllers: [
        SourcesController,
        DestinationsController,
        DeletionsController,
        AudiencesController,
        ComputedTraitsController,
        OutcomesConsumer,
      ],
      providers: [
        SourcesService,
        DestinationsService,
        DeletionsService,
        ReceiptsService,
        Housekeeping,
        {
          provide: HOUSEKEEPING_OPTIONS,
          useValue: {
            republishAfterMs: republishAfterMs(config.admin.produceTimeoutMs),
            syncExpiryMs: SYNC_EXPIRY_MS,
          },
        },
        AudiencesService,
        SyncsService,
        AdminMetrics,
        { provide: CLOCK, useValue: SYSTEM_CLOCK },
        { provide: SecretBox, useValue: new SecretBox(config.admin.secretsKey) },
        { provide: ADMIN_TOKENS, useValue: config.admin.tokens },
      ],
    };
  }
}
