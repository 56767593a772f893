export { AudienceEntity, type AudienceKind } from './entities/audience.entity';
export { AudienceMemberEntity } from './entities/audience-member.entity';
export { AudienceSyncEntity, type AudienceSyncStatus } from './entities/audience-sync.entity';
export { AudienceSyncMemberEntity } from './entities/audience-sync-member.entity';
export { describeDatabaseUrl } from './database-url';
export {
  DeletionNotificationEntity,
  type DeletionNotificationStatus,
} from './entities/deletion-notification.entity';
export { DeletionRequestEntity } from './entities/deletion-request.entity';
export {
  DestinationEntity,
  type DestinationKind,
  WEBHOOKS_DESTINATION_KIND,
} from './entities/destination.entity';
export { SourceEntity } from './entities/source.entity';
export { SourceUsageEntity } from './entities/source-usage.entity';
export { addUsage, readUsage, type UsageCount } from './usage';
export { WebhookEntity } from './entities/webhook.entity';
export type { HeaderValueCipher } from './migrations/1763769600700-encrypt-webhook-header-values.migration';
export { type MigrationClass, SETTINGS_MIGRATIONS } from './migrations/settings-migrations';
export { DEFAULT_RECONNECT_BACKOFF, type ReconnectBackoff } from './reconnect-backoff';
export {
  SETTINGS_CHANNEL,
  SettingsCache,
  type SettingsCacheOptions,
  type SettingsCacheStats,
  type SettingsReload,
  type SettingsReloadReason,
} from './settings.cache';
export {
  createSettingsDataSource,
  type DatabasePing,
  DEFAULT_PING_TIMEOUT_MS,
  type MigrationOptions,
  pingDatabase,
  revertAllMigrations,
  runMigrations,
  SETTINGS_ENTITIES,
  SETTINGS_MIGRATIONS_TABLE,
  type SettingsDataSourceOptions,
} from './settings.data-source';
export { SettingsUnavailableError } from './settings.errors';
export type { SettingsLogger } from './settings.listener';
export { SettingsModule, type SettingsModuleOptions } from './settings.module';
export type {
  BatchSettings,
  DestinationSettings,
  OrderingSettings,
  SourceSettings,
  WebhookSettings,
} from './settings.snapshot';
