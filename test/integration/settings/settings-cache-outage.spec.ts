import {
  createSettingsDataSource,
  describeDatabaseUrl,
  runMigrations,
  SettingsCache,
  SourceEntity,
} from '@app/settings';
import type { DataSource } from 'typeorm';

import { RecordingLogger } from './recording-logger';
import {
  createTestDatabase,
  newWriteKey,
  type TestDatabase,
  waitFor,
} from '../../helpers/test-database';

/** Long enough that no timer reload can happen during the test. */
const ONE_HOUR_MS = 3_600_000;

/**
 * The database becomes unreachable (new connections refused, open ones terminated), then
 * comes back. Deterministic: the outage is switched on and off with ALTER DATABASE.
 */
describe(`${SettingsCache.name} during a database outage`, () => {
  let database: TestDatabase;
  let writer: DataSource;
  let cache: SettingsCache;
  const logger = new RecordingLogger();
  let sourceId: string;
  let writeKey: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    writer = await createSettingsDataSource({ url: database.url, poolSize: 1 }).initialize();
    await runMigrations(writer);
    writeKey = newWriteKey();
    sourceId = (await writer.getRepository(SourceEntity).save({ name: 'Shop', writeKey })).id;
    cache = new SettingsCache(database.url, {
      refreshIntervalMs: ONE_HOUR_MS,
      logger,
      reconnectBackoff: { initialDelayMs: 20, maxDelayMs: 100 },
    });
    await cache.start();
  });

  afterAll(async () => {
    await cache?.stop();
    await writer?.destroy();
    await database?.drop();
  });

  /** Refuses new connections to the test database and terminates the open ones. */
  async function cutOff(): Promise<void> {
    await database.admin(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS false`);
    await database.admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = '${database.name}' AND pid <> pg_backend_pid()`,
    );
  }

  it('notices the lost LISTEN connection and keeps serving its snapshot', async () => {
    await cutOff();
    await waitFor('listener lost', () => !cache.stats.listening);
    await cache.refresh();
    expect(cache.stats.failedReloads).toBeGreaterThanOrEqual(1);
    expect(cache.version).toBe(1);
    expect(cache.sourceByWriteKey(writeKey)).toMatchObject({ id: sourceId, name: 'Shop' });
  });

  it('warns with the database named but never the connection URL', () => {
    expect(logger.warnings.some((warning) => warning.includes('reload (manual)'))).toBe(true);
    expect(logger.warnings.some((w) => w.includes(describeDatabaseUrl(database.url)))).toBe(true);
    expect(logger.all().some((message) => message.includes(database.url))).toBe(false);
    expect(logger.all().some((message) => message.includes(':sluice@'))).toBe(false);
  });

  it('reconnects once the database is back, catches up, then follows notifications', async () => {
    await database.admin(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS true`);
    await waitFor(
      'listener back',
      () => cache.stats.listening && cache.stats.reloads.reconnect > 0,
    );
    const versionAfterReconnect = cache.version;
    await writer.getRepository(SourceEntity).update({ id: sourceId }, { name: 'Renamed' });
    await waitFor('rename seen', () => cache.source(sourceId)?.name === 'Renamed');
    expect(cache.version).toBeGreaterThan(versionAfterReconnect);
    expect(cache.stats.reloads.timer).toBe(0);
  });
});
