import type { MigrationInterface } from 'typeorm';

import { CreateSettingsTables1763769600000 } from './1763769600000-create-settings-tables.migration';
import { NotifySettingsChanges1763769600001 } from './1763769600001-notify-settings-changes.migration';
import { CreateSourceUsage1763769600002 } from './1763769600002-create-source-usage.migration';
import { CreateDeletionsAndAudiences1763769600100 } from './1763769600100-create-deletions-and-audiences.migration';
import { CreateDeliveryLedger1763769600200 } from './1763769600200-create-delivery-ledger.migration';
import { AddSourceAllowedOrigins1763769600300 } from './1763769600300-add-source-allowed-origins.migration';
import { AddReplayJobResume1763769600400 } from './1763769600400-add-replay-job-resume.migration';
import { ManyDestinationsPerSource1763769600500 } from './1763769600500-many-destinations-per-source.migration';
import { AddDestinationRateLimit1763769600600 } from './1763769600600-add-destination-rate-limit.migration';
import { EncryptWebhookHeaderValues1763769600700 } from './1763769600700-encrypt-webhook-header-values.migration';
import { AddLedgerSearchColumns1763769600800 } from './1763769600800-add-ledger-search-columns.migration';
import { CreateAdminAudit1763769600900 } from './1763769600900-create-admin-audit.migration';
import { AddDestinationSigning1763769601000 } from './1763769601000-add-destination-signing.migration';
import { AddDestinationBatching1763769601050 } from './1763769601050-add-destination-batching.migration';
import { AddDestinationSendTraceparent1763769601100 } from './1763769601100-add-destination-send-traceparent.migration';
import { AddDestinationOrdering1790002000000 } from './1790002000000-add-destination-ordering.migration';

/** Type of a migration class, as TypeORM's `migrations` option takes it. */
export type MigrationClass = new () => MigrationInterface;

/**
 * Every settings migration, oldest first. Append new ones at the end with a larger timestamp
 * suffix (TypeORM orders and records them by that suffix); never edit or reorder old ones.
 */
export const SETTINGS_MIGRATIONS: readonly MigrationClass[] = [
  CreateSettingsTables1763769600000,
  NotifySettingsChanges1763769600001,
  CreateSourceUsage1763769600002,
  CreateDeletionsAndAudiences1763769600100,
  CreateDeliveryLedger1763769600200,
  AddSourceAllowedOrigins1763769600300,
  AddReplayJobResume1763769600400,
  ManyDestinationsPerSource1763769600500,
  AddDestinationRateLimit1763769600600,
  EncryptWebhookHeaderValues1763769600700,
  AddLedgerSearchColumns1763769600800,
  CreateAdminAudit1763769600900,
  AddDestinationSigning1763769601000,
  AddDestinationBatching1763769601050,
  AddDestinationSendTraceparent1763769601100,
  AddDestinationOrdering1790002000000,
];
