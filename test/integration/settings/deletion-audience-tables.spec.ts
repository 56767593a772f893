import { createSettingsDataSource, runMigrations, SETTINGS_CHANNEL } from '@app/settings';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

import {
  createTestDatabase,
  newWriteKey,
  type TestDatabase,
  waitFor,
} from '../../helpers/test-database';

/**
 * The deletion and audience tables are written per request and per sync (100,000 member rows
 * at a time): none of their writes may make the settings caches reload.
 */
describe('deletion and audience tables', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let listener: Client;
  const tables: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(dataSource);
    listener = new Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel !== SETTINGS_CHANNEL) return;
      tables.push((JSON.parse(message.payload ?? '{}') as { table: string }).table);
    });
    await listener.query(`LISTEN ${SETTINGS_CHANNEL}`);
  });

  afterAll(async () => {
    await listener?.end();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('announce nothing on the settings channel', async () => {
    const [source] = await dataSource.query(
      `INSERT INTO source (name, write_key) VALUES ('s', $1) RETURNING id`,
      [newWriteKey()],
    );
    await waitFor('the source notification', () => tables.length === 1);
    await dataSource.transaction(async (m) => {
      const [request] = await m.query(
        `INSERT INTO deletion_request (user_count, created_at) VALUES (1, now()) RETURNING id`,
      );
      await m.query(
        `INSERT INTO deletion_notification (id, request_id, source_id, destination_id, user_id)
         VALUES (gen_random_uuid(), $1, $2, gen_random_uuid(), 'u')`,
        [request.id, source.id],
      );
      await m.query(`UPDATE deletion_notification SET status = 'delivered'`);
      const [audience] = await m.query(
        `INSERT INTO audience (source_id, kind, name, key) VALUES ($1, 'audience', 'A', 'a')
         RETURNING id`,
        [source.id],
      );
      const [sync] = await m.query(
        `INSERT INTO audience_sync (audience_id) VALUES ($1) RETURNING id`,
        [audience.id],
      );
      await m.query(
        `INSERT INTO audience_sync_member (sync_id, user_id, value)
         SELECT $1, 'u' || i, 'true' FROM generate_series(1, 1000) AS i`,
        [sync.id],
      );
      await m.query(
        `INSERT INTO audience_member (audience_id, user_id, value)
         SELECT $1, user_id, value FROM audience_sync_member WHERE sync_id = $2`,
        [audience.id, sync.id],
      );
      await m.query(`UPDATE audience SET member_count = 1000 WHERE id = $1`, [audience.id]);
      await m.query(`DELETE FROM audience_sync_member`);
    });
    // A settings change made afterwards is the next (and only other) notification.
    await dataSource.query(`UPDATE source SET name = 't' WHERE id = $1`, [source.id]);
    await waitFor('the second source notification', () => tables.length >= 2);
    expect(tables).toEqual(['source', 'source']);
  });

  it('refuse a trait key that is not snake_case, and a duplicate key on one source', async () => {
    const [source] = await dataSource.query(
      `INSERT INTO source (name, write_key) VALUES ('s', $1) RETURNING id`,
      [newWriteKey()],
    );
    const insert = (key: string) =>
      dataSource.query(
        `INSERT INTO audience (source_id, kind, name, key) VALUES ($1, 'computed_trait', 'n', $2)`,
        [source.id, key],
      );
    await expect(insert('Not Snake')).rejects.toThrow(/audience_key_check/);
    await expect(insert('ltv')).resolves.toBeDefined();
    await expect(insert('ltv')).rejects.toThrow(/audience_source_key_unique/);
  });
});
