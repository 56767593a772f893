import {
  createSettingsDataSource,
  DestinationEntity,
  runMigrations,
  SettingsCache,
  type SettingsReload,
  SettingsUnavailableError,
  SourceEntity,
  WebhookEntity,
} from '@app/settings';
import type { DataSource } from 'typeorm';

import { RecordingLogger } from './recording-logger';
import {
  createTestDatabase,
  newWriteKey,
  type TestDatabase,
  waitFor,
} from '../../helpers/test-database';

/** Long enough that no timer reload can happen during a test. */
const ONE_HOUR_MS = 3_600_000;

describe(SettingsCache.name, () => {
  let database: TestDatabase;
  let writer: DataSource;
  const caches: SettingsCache[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    writer = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(writer);
  });

  afterEach(async () => {
    await Promise.all(caches.splice(0).map((cache) => cache.stop()));
  });

  afterAll(async () => {
    await writer?.destroy();
    await database?.drop();
  });

  /** Starts a cache on its own pool, with fast reconnection and a recording logger. */
  async function startCache(logger = new RecordingLogger()): Promise<SettingsCache> {
    const cache = new SettingsCache(database.url, {
      refreshIntervalMs: ONE_HOUR_MS,
      logger,
      now: () => 1_700_000_000_000,
      reconnectBackoff: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    caches.push(cache);
    await cache.start();
    return cache;
  }

  async function seed() {
    const writeKey = newWriteKey();
    const source = await writer.getRepository(SourceEntity).save({ name: 'Shop', writeKey });
    const destination = await writer.getRepository(DestinationEntity).save({
      sourceId: source.id,
      kind: 'webhooks',
      name: 'Hooks',
      enabled: false,
      sharedSecretCiphertext: Buffer.from([9, 8, 7]),
    });
    const webhooks = writer.getRepository(WebhookEntity);
    await webhooks.save({ destinationId: destination.id, position: 1, url: 'https://b.test/' });
    await webhooks.save({
      destinationId: destination.id,
      position: 0,
      url: 'https://a.test/',
      headers: { 'X-Team': 'data' },
    });
    return { writeKey, source, destination };
  }

  it('serves the loaded settings as frozen plain objects', async () => {
    const { writeKey, source, destination } = await seed();
    const cache = await startCache();
    expect(cache.version).toBe(1);
    expect(cache.loadedAt).toBe(1_700_000_000_000);
    expect(cache.sourceByWriteKey(writeKey)).toEqual({
      id: source.id,
      name: 'Shop',
      enabled: true,
      allowedOrigins: [],
    });
    expect(cache.source(source.id)).toBe(cache.sourceByWriteKey(writeKey));
    const [loaded] = cache.destinationsForSource(source.id);
    expect(loaded).toBe(cache.destination(destination.id));
    expect(loaded?.webhooks.map((webhook) => webhook.url)).toEqual([
      'https://a.test/',
      'https://b.test/',
    ]);
    expect(loaded?.webhooks[0]?.headers).toEqual({ 'X-Team': 'data' });
    expect(Array.from(loaded?.sharedSecretCiphertext ?? [])).toEqual([9, 8, 7]);
    expect(Object.isFrozen(loaded)).toBe(true);
  });

  it('knows nothing of an unknown write key', async () => {
    const cache = await startCache();
    expect(cache.sourceByWriteKey(newWriteKey())).toBeUndefined();
  });

  it('reloads on NOTIFY, long before its fallback timer', async () => {
    const { source } = await seed();
    const cache = await startCache();
    const reloads: SettingsReload[] = [];
    cache.onReload((reload) => reloads.push(reload));
    await writer.getRepository(SourceEntity).update(
      { id: source.id },
      {
        name: 'Renamed',
        enabled: false,
      },
    );
    await waitFor('cache sees the rename', () => cache.source(source.id)?.name === 'Renamed');
    expect(cache.source(source.id)?.enabled).toBe(false);
    expect(reloads[0]).toMatchObject({ version: 2, reason: 'notification' });
    expect(cache.stats.reloads).toMatchObject({ start: 1, notification: 1, timer: 0 });
  });

  it('falls back to its timer when a change is not announced', async () => {
    const { source } = await seed();
    const cache = new SettingsCache(database.url, {
      refreshIntervalMs: 50,
      logger: new RecordingLogger(),
    });
    caches.push(cache);
    await cache.start();
    await writer.query('ALTER TABLE source DISABLE TRIGGER source_settings_notify');
    try {
      await writer.getRepository(SourceEntity).update({ id: source.id }, { name: 'Silent' });
      await waitFor('timer reload', () => cache.source(source.id)?.name === 'Silent');
    } finally {
      await writer.query('ALTER TABLE source ENABLE TRIGGER source_settings_notify');
    }
    expect(cache.stats.notifications).toBe(0);
    expect(cache.stats.reloads.timer).toBeGreaterThanOrEqual(1);
  });

  it('coalesces a burst of notifications into at most two reloads', async () => {
    await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => seed()));
    const cache = await startCache();
    const before = cache.stats;
    await writer.query(`UPDATE source SET name = 'Burst'`);
    await waitFor(
      'eight notifications',
      () => cache.stats.notifications - before.notifications >= 8,
    );
    await cache.refresh();
    const notifications = cache.stats.reloads.notification - before.reloads.notification;
    expect(notifications).toBeGreaterThanOrEqual(1);
    expect(notifications).toBeLessThanOrEqual(2);
  });

  it('refuses to start without a reachable database', async () => {
    const missing = new URL(database.url);
    missing.pathname = `/${database.name}_missing`;
    const cache = new SettingsCache(missing.toString(), {
      refreshIntervalMs: ONE_HOUR_MS,
      logger: new RecordingLogger(),
    });
    await expect(cache.start()).rejects.toBeInstanceOf(SettingsUnavailableError);
  });

  it('stops reloading once stopped', async () => {
    const { source } = await seed();
    const cache = await startCache();
    await cache.stop();
    await writer.getRepository(SourceEntity).update({ id: source.id }, { name: 'After stop' });
    await cache.refresh();
    expect(cache.source(source.id)?.name).toBe('Shop');
    expect(cache.stats.listening).toBe(false);
  });
});
