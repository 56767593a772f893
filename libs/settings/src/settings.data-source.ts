import { setTimeout as sleep } from 'node:timers/promises';

import { DataSource } from 'typeorm';

import { databaseUrlPassword, safeErrorMessage } from './database-url';
import { AudienceEntity } from './entities/audience.entity';
import { AudienceMemberEntity } from './entities/audience-member.entity';
import { AudienceSyncEntity } from './entities/audience-sync.entity';
import { AudienceSyncMemberEntity } from './entities/audience-sync-member.entity';
import { DeletionNotificationEntity } from './entities/deletion-notification.entity';
import { DeletionRequestEntity } from './entities/deletion-request.entity';
import { DestinationEntity } from './entities/destination.entity';
import { SourceEntity } from './entities/source.entity';
import { SourceUsageEntity } from './entities/source-usage.entity';
import { WebhookEntity } from './entities/webhook.entity';
import {
  EncryptWebhookHeaderValues1763769600700,
  type HeaderValueCipher,
} from './migrations/1763769600700-encrypt-webhook-header-values.migration';
import { SETTINGS_MIGRATIONS } from './migrations/settings-migrations';

/** Every settings entity, for a DataSource's `entities` option. */
export const SETTINGS_ENTITIES = [
  SourceEntity,
  DestinationEntity,
  WebhookEntity,
  SourceUsageEntity,
  DeletionRequestEntity,
  DeletionNotificationEntity,
  AudienceEntity,
  AudienceMemberEntity,
  AudienceSyncEntity,
  AudienceSyncMemberEntity,
] as const;

/** Table in which TypeORM records which settings migrations have run. */
export const SETTINGS_MIGRATIONS_TABLE = 'sluice_migrations';

/** Default time a readiness ping may take, in milliseconds. */
export const DEFAULT_PING_TIMEOUT_MS = 2_000;

/** How to reach the settings database. */
export interface SettingsDataSourceOptions {
  /** `postgres://user:password@host:port/database`; its password is never logged. */
  readonly url: string;
  /** Most pooled connections; defaults to 10. */
  readonly poolSize?: number;
  /** Time allowed to open one connection, in milliseconds; defaults to 5,000. */
  readonly connectTimeoutMs?: number;
  /** `application_name` shown in `pg_stat_activity`; defaults to `sluice`. */
  readonly applicationName?: string;
  /** Logs every SQL statement through TypeORM's logger; off by default. */
  readonly logSql?: boolean;
}

/**
 * Creates (but does not initialize) a DataSource for the settings tables. The schema comes
 * from migrations only: `synchronize` and `migrationsRun` are off, and no extension is
 * installed (`gen_random_uuid()` is built into PostgreSQL 13 and later).
 */
export function createSettingsDataSource(options: SettingsDataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    poolSize: options.poolSize ?? 10,
    connectTimeoutMS: options.connectTimeoutMs ?? 5_000,
    applicationName: options.applicationName ?? 'sluice',
    entities: [...SETTINGS_ENTITIES],
    migrations: [...SETTINGS_MIGRATIONS],
    migrationsTableName: SETTINGS_MIGRATIONS_TABLE,
    migrationsTransactionMode: 'all',
    synchronize: false,
    migrationsRun: false,
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    logging: options.logSql ?? false,
  });
}

/** What some migrations need beyond the database. */
export interface MigrationOptions {
  /**
   * Seals and opens static header values (a `SecretBox` under SECRETS_ENCRYPTION_KEY); needed
   * only when webhooks with static headers exist as their migration runs or is reverted.
   */
  readonly headerCipher?: HeaderValueCipher;
}

/** Hands the options to the migration instances that use them. */
function equip(dataSource: DataSource, options: MigrationOptions): void {
  for (const migration of dataSource.migrations as object[]) {
    if (migration instanceof EncryptWebhookHeaderValues1763769600700) {
      migration.cipher = options.headerCipher;
    }
  }
}

/** Runs every pending migration in one transaction; returns the names of those it ran. */
export async function runMigrations(
  dataSource: DataSource,
  options: MigrationOptions = {},
): Promise<string[]> {
  equip(dataSource, options);
  const ran = await dataSource.runMigrations({ transaction: 'all' });
  return ran.map((migration) => migration.name);
}

/**
 * Reverts every executed migration, newest first, each in its own transaction; returns the
 * names of those it reverted. Leaves only TypeORM's (then empty) migrations table behind.
 */
export async function revertAllMigrations(
  dataSource: DataSource,
  options: MigrationOptions = {},
): Promise<string[]> {
  equip(dataSource, options);
  const reverted: string[] = [];
  for (;;) {
    const executed = await executedMigrationNames(dataSource);
    const newest = executed.at(-1);
    if (newest === undefined) return reverted;
    await dataSource.undoLastMigration({ transaction: 'each' });
    reverted.push(newest);
  }
}

/** Names of the migrations recorded as executed, oldest first. */
async function executedMigrationNames(dataSource: DataSource): Promise<string[]> {
  const [table]: { exists: boolean }[] = await dataSource.query(
    `SELECT to_regclass($1) IS NOT NULL AS "exists"`,
    [SETTINGS_MIGRATIONS_TABLE],
  );
  if (!table?.exists) return [];
  const rows: { name: string }[] = await dataSource.query(
    `SELECT "name" FROM "${SETTINGS_MIGRATIONS_TABLE}" ORDER BY "timestamp", "id"`,
  );
  return rows.map((row) => row.name);
}

/** Result of a readiness ping: expected outcomes are values, not exceptions. */
export type DatabasePing = { ok: true; latencyMs: number } | { ok: false; reason: string };

/**
 * Runs a real `SELECT 1` through the DataSource's pool, giving up after `timeoutMs`. Used by
 * `/health/ready`. The reason never contains the connection URL.
 */
export async function pingDatabase(
  dataSource: DataSource,
  timeoutMs = DEFAULT_PING_TIMEOUT_MS,
  now: () => number = Date.now,
): Promise<DatabasePing> {
  if (!dataSource.isInitialized) return { ok: false, reason: 'data source not initialized' };
  const startedAt = now();
  const abort = new AbortController();
  const timeout = sleep(timeoutMs, 'timeout' as const, { signal: abort.signal }).catch(
    () => 'aborted' as const,
  );
  try {
    const answer = dataSource.query('SELECT 1').then(() => 'answered' as const);
    const outcome = await Promise.race([answer, timeout]);
    if (outcome === 'timeout') return { ok: false, reason: `no answer within ${timeoutMs} ms` };
    return { ok: true, latencyMs: now() - startedAt };
  } catch (error) {
    return { ok: false, reason: safeErrorMessage(error, [dataSourcePassword(dataSource)]) };
  } finally {
    abort.abort();
  }
}

/** The connection URL a DataSource was created with, when it was created from one. */
export function dataSourceUrl(dataSource: DataSource): string | undefined {
  const options = dataSource.options;
  return options.type === 'postgres' ? options.url : undefined;
}

/** The password a DataSource connects with, to mask it in messages. */
function dataSourcePassword(dataSource: DataSource): string | undefined {
  const options = dataSource.options;
  if (options.type !== 'postgres') return undefined;
  if (typeof options.password === 'string') return options.password;
  return options.url ? databaseUrlPassword(options.url) : undefined;
}
