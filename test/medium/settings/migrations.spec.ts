import {
  createSettingsDataSource,
  pingDatabase,
  revertAllMigrations,
  runMigrations,
  SETTINGS_MIGRATIONS,
  SETTINGS_MIGRATIONS_TABLE,
} from '@app/settings';
import type { DataSource } from 'typeorm';

import { createTestDatabase, type TestDatabase } from '../../helpers/test-database';

const EXPECTED_CONSTRAINTS = [
  'admin_audit_pkey',
  'audience_key_check',
  'audience_kind_check',
  'audience_member_audience_id_fkey',
  'audience_member_pkey',
  'audience_pkey',
  'audience_source_id_fkey',
  'audience_source_key_unique',
  'audience_sync_audience_id_fkey',
  'audience_sync_member_pkey',
  'audience_sync_member_sync_id_fkey',
  'audience_sync_pkey',
  'audience_sync_status_check',
  'deletion_notification_pkey',
  'deletion_notification_request_destination_user_unique',
  'deletion_notification_request_id_fkey',
  'deletion_notification_status_check',
  'deletion_request_pkey',
  'deletion_request_user_count_check',
  'delivery_ledger_pkey',
  'delivery_ledger_state_check',
  'destination_batching_check',
  'destination_filter_object_check',
  'destination_kind_check',
  'destination_name_not_empty_check',
  'destination_ordering_check',
  'destination_pkey',
  'destination_previous_secret_check',
  'destination_rate_limit_range_check',
  'destination_shared_secret_not_empty_check',
  'destination_signature_mode_check',
  'destination_slot_range_check',
  'destination_source_id_fkey',
  'destination_source_name_unique',
  'destination_source_slot_unique',
  'replay_job_pkey',
  'replay_job_status_check',
  'source_allowed_origins_count_check',
  'source_name_not_empty_check',
  'source_pkey',
  'source_usage_calls_check',
  'source_usage_pkey',
  'source_usage_source_id_fkey',
  'source_write_key_length_check',
  'source_write_key_unique',
  'webhook_destination_id_fkey',
  'webhook_destination_position_unique',
  'webhook_headers_check',
  'webhook_pkey',
  'webhook_position_range_check',
  'webhook_url_scheme_check',
];

/** The settings tables and, without NOTIFY triggers, the deletion and audience ones. */
const OUR_TABLES = [
  'admin_audit',
  'audience',
  'audience_member',
  'audience_sync',
  'audience_sync_member',
  'deletion_notification',
  'deletion_request',
  'delivery_ledger',
  'destination',
  'replay_job',
  'source',
  'source_usage',
  'webhook',
];

describe('settings migrations', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Names of our tables in the public schema, besides TypeORM's bookkeeping table. */
  async function ourTables(): Promise<string[]> {
    const rows: { name: string }[] = await dataSource.query(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_name <> $1 ORDER BY 1`,
      [SETTINGS_MIGRATIONS_TABLE],
    );
    return rows.map((row) => row.name);
  }

  /** Names of functions in the public schema. */
  async function ourFunctions(): Promise<string[]> {
    const rows: { name: string }[] = await dataSource.query(
      `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public' ORDER BY 1`,
    );
    return rows.map((row) => row.name);
  }

  it('creates the tables and both functions', async () => {
    await expect(runMigrations(dataSource)).resolves.toEqual([
      'CreateSettingsTables1763769600000',
      'NotifySettingsChanges1763769600001',
      'CreateSourceUsage1763769600002',
      'CreateDeletionsAndAudiences1763769600100',
      'CreateDeliveryLedger1763769600200',
      'AddSourceAllowedOrigins1763769600300',
      'AddReplayJobResume1763769600400',
      'ManyDestinationsPerSource1763769600500',
      'AddDestinationRateLimit1763769600600',
      'EncryptWebhookHeaderValues1763769600700',
      'AddLedgerSearchColumns1763769600800',
      'CreateAdminAudit1763769600900',
      'AddDestinationSigning1763769601000',
      'AddDestinationBatching1763769601050',
      'AddDestinationSendTraceparent1763769601100',
      'AddDestinationOrdering1790002000000',
    ]);
    await expect(ourTables()).resolves.toEqual(OUR_TABLES);
    await expect(ourFunctions()).resolves.toEqual([
      'sluice_destination_assign_slot',
      'sluice_settings_notify',
      'sluice_webhook_headers_valid',
    ]);
  });

  it('creates every constraint under its chosen name', async () => {
    const rows: { name: string }[] = await dataSource.query(
      `SELECT conname AS name FROM pg_constraint
       WHERE conrelid = ANY($1::regclass[])
       ORDER BY 1`,
      [OUR_TABLES],
    );
    expect(rows.map((row) => row.name)).toEqual(EXPECTED_CONSTRAINTS);
  });

  it('makes the webhook position constraint deferrable, initially deferred', async () => {
    const [row]: { deferrable: boolean; deferred: boolean }[] = await dataSource.query(
      `SELECT condeferrable AS deferrable, condeferred AS deferred FROM pg_constraint
       WHERE conname = 'webhook_destination_position_unique'`,
    );
    expect(row).toEqual({ deferrable: true, deferred: true });
  });

  it('installs insert/update/delete and truncate triggers on every table, and the slot one', async () => {
    const rows: { name: string }[] = await dataSource.query(
      `SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1`,
    );
    expect(rows.map((row) => row.name)).toEqual([
      'destination_assign_slot',
      ...['destination', 'source', 'webhook'].flatMap((table) => [
        `${table}_settings_notify`,
        `${table}_settings_notify_truncate`,
      ]),
    ]);
  });

  it('gives a source an empty origin allow-list by default, and at most 50 origins', async () => {
    const key = 'k'.repeat(40);
    const [row]: { origins: string[] }[] = await dataSource.query(
      `INSERT INTO source (name, write_key) VALUES ('web', $1) RETURNING allowed_origins AS origins`,
      [key],
    );
    expect(row.origins).toEqual([]);
    const many = Array.from({ length: 51 }, (_, i) => `https://s${i}.example.com`);
    await expect(
      dataSource.query('UPDATE source SET allowed_origins = $1 WHERE write_key = $2', [many, key]),
    ).rejects.toThrow(/source_allowed_origins_count_check/);
    await dataSource.query('DELETE FROM source WHERE write_key = $1', [key]);
  });

  it('matches the entities: TypeORM sees nothing to synchronize', async () => {
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('has nothing left to run a second time', async () => {
    await expect(runMigrations(dataSource)).resolves.toEqual([]);
  });

  it('reverts everything, leaving no table or function of ours', async () => {
    await expect(revertAllMigrations(dataSource)).resolves.toEqual([
      'AddDestinationOrdering1790002000000',
      'AddDestinationSendTraceparent1763769601100',
      'AddDestinationBatching1763769601050',
      'AddDestinationSigning1763769601000',
      'CreateAdminAudit1763769600900',
      'AddLedgerSearchColumns1763769600800',
      'EncryptWebhookHeaderValues1763769600700',
      'AddDestinationRateLimit1763769600600',
      'ManyDestinationsPerSource1763769600500',
      'AddReplayJobResume1763769600400',
      'AddSourceAllowedOrigins1763769600300',
      'CreateDeliveryLedger1763769600200',
      'CreateDeletionsAndAudiences1763769600100',
      'CreateSourceUsage1763769600002',
      'NotifySettingsChanges1763769600001',
      'CreateSettingsTables1763769600000',
    ]);
    await expect(ourTables()).resolves.toEqual([]);
    await expect(ourFunctions()).resolves.toEqual([]);
  });

  it('migrates up again after a full revert', async () => {
    await expect(runMigrations(dataSource)).resolves.toHaveLength(SETTINGS_MIGRATIONS.length);
    await expect(ourTables()).resolves.toEqual(OUR_TABLES);
  });

  it('answers a readiness ping', async () => {
    await expect(pingDatabase(dataSource)).resolves.toMatchObject({ ok: true });
  });

  it('reports a ping that gets no answer in time', async () => {
    // Hold every pooled connection, so that SELECT 1 waits for one.
    const held = [dataSource.createQueryRunner(), dataSource.createQueryRunner()];
    await Promise.all(held.map((runner) => runner.connect()));
    try {
      await expect(pingDatabase(dataSource, 50)).resolves.toEqual({
        ok: false,
        reason: 'no answer within 50 ms',
      });
    } finally {
      await Promise.all(held.map((runner) => runner.release()));
    }
  });
});
