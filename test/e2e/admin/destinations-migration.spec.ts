import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DataSource } from 'typeorm';

import { createSettingsDataSource, runMigrations, SETTINGS_MIGRATIONS } from '@app/settings';
import { SecretBox } from '@app/signing';

import { callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { TEST_SECRETS_KEY, uniquePrefix } from '../../helpers/services';
import { createTestDatabase, newWriteKey, type TestDatabase } from '../../helpers/test-database';

/** The migration under test. */
const MIGRATION = 'ManyDestinationsPerSource1763769600500';
/** It and the migrations after it, which the test reverts first and then runs again. */
const FROM_IT = SETTINGS_MIGRATIONS.slice(
  SETTINGS_MIGRATIONS.findIndex((migration) => migration.name === MIGRATION),
).map((migration) => migration.name);

/**
 * A database holding today's single destination per source (made by the migrations before
 * ManyDestinationsPerSource) is migrated: the destination stays, same id, same secret, same
 * webhooks, as the source's first; the older admin routes keep answering for it.
 */
describe('the migration to several destinations per source', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let admin: NestFastifyApplication | undefined;
  const box = new SecretBox(TEST_SECRETS_KEY);
  const sealed = box.seal('the-old-secret');
  let sourceId: string;
  let destinationId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(dataSource);
    // Back to the schema before this migration, which holds one destination per source.
    for (let i = 0; i < FROM_IT.length; i += 1) {
      await dataSource.undoLastMigration({ transaction: 'all' });
    }
    const [source] = await dataSource.query(
      `INSERT INTO source (name, write_key) VALUES ('shop', $1) RETURNING id`,
      [newWriteKey()],
    );
    sourceId = source.id;
    const [destination] = await dataSource.query(
      `INSERT INTO destination (source_id, kind, name, enabled, shared_secret_ciphertext)
       VALUES ($1, 'webhooks', 'hooks', true, $2) RETURNING id`,
      [sourceId, sealed],
    );
    destinationId = destination.id;
    await dataSource.query(
      `INSERT INTO webhook (destination_id, position, url, headers) VALUES
       ($1, 0, 'https://a.example.com/h', '{"X-Team":"data"}'), ($1, 1, 'https://b.example.com/h', '{}')`,
      [destinationId],
    );
  });

  afterAll(async () => {
    await admin?.close();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('runs only the new migration (and those after it)', async () => {
    expect(FROM_IT[0]).toBe(MIGRATION);
    // A later one encrypts the stored static header values, with the apps' key.
    await expect(runMigrations(dataSource, { headerCipher: box })).resolves.toEqual(FROM_IT);
  });

  it('keeps the destination as the first, same id, secret, webhooks; slot 0 and no filter', async () => {
    const [row] = await dataSource.query(
      `SELECT id, name, enabled, slot, filter, shared_secret_ciphertext AS secret
       FROM destination WHERE source_id = $1`,
      [sourceId],
    );
    expect(row).toMatchObject({
      id: destinationId,
      name: 'hooks',
      enabled: true,
      slot: 0,
      filter: null,
    });
    expect(Buffer.compare(row.secret, sealed)).toBe(0);
    const hooks = await dataSource.query(
      'SELECT position, url, headers FROM webhook WHERE destination_id = $1 ORDER BY position',
      [destinationId],
    );
    const opened = (hooks as { headers: Record<string, string> }[]).map((hook) => ({
      ...hook,
      headers: Object.fromEntries(
        Object.entries(hook.headers).map(([name, value]) => [name, box.openText(value)]),
      ),
    }));
    expect(opened).toEqual([
      { position: 0, url: 'https://a.example.com/h', headers: { 'X-Team': 'data' } },
      { position: 1, url: 'https://b.example.com/h', headers: {} },
    ]);
  });

  it('answers the older /destination routes for it, and lists it under /destinations', async () => {
    admin = await startAdminBeside({ db: database, prefix: uniquePrefix('migration') });
    const url = `${await admin.getUrl()}/admin/v1/sources/${sourceId}`;
    const old = await callAdmin(url, 'GET', '/destination');
    expect(old).toMatchObject({
      status: 200,
      body: {
        id: destinationId,
        name: 'hooks',
        enabled: true,
        sharedSecretSet: true,
        filter: null,
      },
    });
    expect((old.body.webhooks as { url: string }[]).map((w) => w.url)).toEqual([
      'https://a.example.com/h',
      'https://b.example.com/h',
    ]);
    const list = await callAdmin(url, 'GET', '/destinations');
    expect((list.body as { id: string }[]).map((d) => d.id)).toEqual([destinationId]);
    const second = await callAdmin(url, 'POST', '/destinations', { name: 'CRM' });
    expect(second.status).toBe(201);
    expect((await callAdmin(url, 'GET', '/destination')).body.id).toBe(destinationId);
  });

  it('refuses to revert while a source has several destinations', async () => {
    // The migrations after it revert first.
    for (let i = 1; i < FROM_IT.length; i += 1) {
      await dataSource.undoLastMigration({ transaction: 'all' });
    }
    await expect(dataSource.undoLastMigration({ transaction: 'all' })).rejects.toThrow(
      /several destinations/,
    );
  });
});
