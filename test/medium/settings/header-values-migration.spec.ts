import { createSettingsDataSource, revertAllMigrations, runMigrations } from '@app/settings';
import { SecretBox } from '@app/signing';
import type { DataSource } from 'typeorm';

import { TEST_SECRETS_KEY } from '../../helpers/services';
import { createTestDatabase, newWriteKey, type TestDatabase } from '../../helpers/test-database';

const MIGRATION = 'EncryptWebhookHeaderValues1763769600700';
const PLAIN = { Authorization: 'Bearer plain-token', 'X-Team': 'data' };

/**
 * The migration that encrypts the static header values stored before it: sealed with the
 * apps' key, refused without one when there is something to encrypt, opened again on revert.
 */
describe(MIGRATION, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const box = new SecretBox(TEST_SECRETS_KEY);
  let webhookId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(dataSource);
    await undoThrough(MIGRATION);
    const [row]: { id: string }[] = await dataSource.query(
      `WITH s AS (INSERT INTO source (name, write_key) VALUES ('shop', $1) RETURNING id),
            d AS (INSERT INTO destination (source_id, kind, name) SELECT id, 'webhooks', 'hooks' FROM s RETURNING id)
       INSERT INTO webhook (destination_id, position, url, headers)
       SELECT id, 0, 'https://a.example.com/h', $2 FROM d RETURNING id`,
      [newWriteKey(), JSON.stringify(PLAIN)],
    );
    webhookId = row.id;
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Reverts the newest migrations, down to and including `name`. */
  async function undoThrough(name: string): Promise<void> {
    for (;;) {
      const [last]: { name: string }[] = await dataSource.query(
        'SELECT name FROM sluice_migrations ORDER BY timestamp DESC LIMIT 1',
      );
      await dataSource.undoLastMigration({ transaction: 'all' });
      if (last.name === name) return;
    }
  }

  async function stored(): Promise<Record<string, string>> {
    const [row]: { headers: Record<string, string> }[] = await dataSource.query(
      'SELECT headers FROM webhook WHERE id = $1',
      [webhookId],
    );
    return row.headers;
  }

  it('refuses to run without the key while plain values exist, changing nothing', async () => {
    // TypeORM reports a failed migration on the console too.
    const reported = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await expect(runMigrations(dataSource)).rejects.toThrow(
        /1 webhook\(s\) have static headers: set SECRETS_ENCRYPTION_KEY/,
      );
    } finally {
      reported.mockRestore();
    }
    await expect(stored()).resolves.toEqual(PLAIN);
  });

  it('seals every value with the key, keeping the names', async () => {
    const ran = await runMigrations(dataSource, { headerCipher: box });
    expect(ran[0]).toBe(MIGRATION);
    const headers = await stored();
    expect(Object.keys(headers).sort()).toEqual(Object.keys(PLAIN).sort());
    expect(JSON.stringify(headers)).not.toContain('plain-token');
    expect(box.openText(headers.Authorization)).toBe(PLAIN.Authorization);
    expect(box.openText(headers['X-Team'])).toBe(PLAIN['X-Team']);
  });

  it('opens them again when reverted with the key, and refuses without it', async () => {
    await expect(revertAllMigrations(dataSource)).rejects.toThrow(/to decrypt their values/);
    await expect(stored()).resolves.not.toEqual(PLAIN);
    // runMigrations hands the key to the migration (it runs again what the revert undid after
    // it); revert down to it alone.
    await expect(runMigrations(dataSource, { headerCipher: box })).resolves.not.toContain(
      MIGRATION,
    );
    await undoThrough(MIGRATION);
    await expect(stored()).resolves.toEqual(PLAIN);
  });
});
