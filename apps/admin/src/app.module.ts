import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';

import { ConsumerLagModule, KafkaConnection, lagGroups, RecordReader } from '@app/kafka';
import { RuntimeModule } from '@app/runtime';
import { SecretBox } from '@app/signing';

import { AdminMetrics } from './admin.metrics';
import { AudiencesController } from './audiences/audiences.controller';
import { AudiencesRepository } from './audiences/audiences.repository';
import { AudiencesService } from './audiences/audiences.service';
import { ComputedTraitsController } from './audiences/computed-traits.controller';
import { SyncsService } from './audiences/syncs.service';
import { AuditController } from './audit/audit.controller';
import { AuditInterceptor } from './audit/audit.interceptor';
import { AuditRepository } from './audit/audit.repository';
import { ADMIN_TOKENS } from './auth/admin-token.guard';
import { adminTokens } from './auth/admin-tokens';
import { CLOCK, SYSTEM_CLOCK } from './clock';
import { AdminConfig } from './config';
import { DeletionsController } from './deletions/deletions.controller';
import { DeletionsRepository } from './deletions/deletions.repository';
import { DeletionsService } from './deletions/deletions.service';
import { OutcomesConsumer } from './deletions/outcomes.consumer';
import { BreakerChangesConsumer } from './destinations/breaker-changes.consumer';
import { BreakerStates } from './destinations/breaker-states';
import { ReceiptsService } from './deletions/receipts.service';
import { DeliveriesController } from './deliveries/deliveries.controller';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DestinationHealthController } from './deliveries/destination-health.controller';
import { DestinationHealthService } from './deliveries/destination-health.service';
import {
  REPLAY_HEARTBEAT_MS,
  REPLAY_JOBS_OPTIONS,
  REPLAY_PAGE_ROWS,
  REPLAY_STALE_AFTER_MS,
  ReplayJobsService,
} from './deliveries/replay-jobs.service';
import { ReplayJobsRepository } from './deliveries/replay-jobs.repository';
import { ReplayService } from './deliveries/replay.service';
import { Replayer } from './deliveries/replayer';
import { ReplaysController } from './deliveries/replays.controller';
import { DestinationsController } from './destinations/destinations.controller';
import { DestinationsRepository } from './destinations/destinations.repository';
import { DestinationsService, SECRET_ROTATION_OPTIONS } from './destinations/destinations.service';
import { SourceDestinationsController } from './destinations/source-destinations.controller';
import {
  Housekeeping,
  HOUSEKEEPING_OPTIONS,
  republishAfterMs,
  SYNC_EXPIRY_MS,
} from './housekeeping';
import { adminKafka } from './kafka-topology';
import { LedgerConsumer } from './ledger/ledger.consumer';
import { LEDGER_WRITER_OPTIONS, LedgerWriter } from './ledger/ledger.writer';
import { SourcesController } from './sources/sources.controller';
import { SourcesRepository } from './sources/sources.repository';
import { SourcesService } from './sources/sources.service';

/**
 * The admin app: the control plane's REST API, the consumer of delivery outcomes that
 * records the receipts of delete notifications, and the delivery ledger's writer.
 */
@Module({})
export class AppModule {
  static forRoot(config: AdminConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, {
          producer: adminKafka(config).producer,
          // The API reads and writes PostgreSQL; its consumers (receipts, ledger) catch up later.
          readiness: { database: true, consumers: false },
        }),
        // sluice_consumer_lag_records{group="…sluice-ledger"}: how far the ledger is behind.
        ConsumerLagModule.forRoot({ groups: lagGroups(adminKafka(config)) }),
      ],
      controllers: [
        SourcesController,
        DestinationsController,
        SourceDestinationsController,
        DeletionsController,
        AudiencesController,
        ComputedTraitsController,
        DeliveriesController,
        ReplaysController,
        AuditController,
        DestinationHealthController,
      ],
      providers: [
        AuditRepository,
        // Every change the API makes is recorded in the audit log.
        { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
        OutcomesConsumer,
        LedgerConsumer,
        BreakerChangesConsumer,
        BreakerStates,
        LedgerWriter,
        {
          provide: LEDGER_WRITER_OPTIONS,
          useValue: { retentionDays: config.admin.ledgerRetentionDays },
        },
        SourcesRepository,
        SourcesService,
        DestinationsRepository,
        DestinationsService,
        DeliveriesRepository,
        DeliveriesService,
        DestinationHealthService,
        ReplayService,
        ReplayJobsRepository,
        ReplayJobsService,
        Replayer,
        {
          provide: REPLAY_JOBS_OPTIONS,
          useValue: {
            maxRangeMs: config.admin.ledgerRetentionDays * 86_400_000,
            pageRows: REPLAY_PAGE_ROWS,
            heartbeatMs: REPLAY_HEARTBEAT_MS,
            staleAfterMs: REPLAY_STALE_AFTER_MS,
          },
        },
        {
          provide: RecordReader,
          useFactory: (connection: KafkaConnection) => new RecordReader(connection),
          inject: [KafkaConnection],
        },
        DeletionsRepository,
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
        AudiencesRepository,
        AudiencesService,
        SyncsService,
        AdminMetrics,
        { provide: CLOCK, useValue: SYSTEM_CLOCK },
        {
          provide: SECRET_ROTATION_OPTIONS,
          useValue: { defaultOverlapSeconds: config.admin.secretOverlapSeconds },
        },
        { provide: SecretBox, useValue: new SecretBox(config.admin.secretsKey) },
        {
          provide: ADMIN_TOKENS,
          useValue: adminTokens(config.admin.tokens, config.admin.namedTokens),
        },
      ],
    };
  }
}
