import {
  pingDatabase,
  runMigrations,
  SettingsCache,
  SettingsModule,
  SourceEntity,
} from '@app/settings';
import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';

import { RecordingLogger } from './recording-logger';
import { createTestDatabase, newWriteKey, type TestDatabase } from '../../helpers/test-database';

describe(SettingsModule.name, () => {
  let database: TestDatabase;
  let moduleRef: TestingModule;

  beforeAll(async () => {
    database = await createTestDatabase();
    moduleRef = await Test.createTestingModule({
      imports: [
        SettingsModule.forRoot({
          database: { url: database.url, poolSize: 2 },
          cache: { refreshIntervalMs: 3_600_000, logger: new RecordingLogger() },
        }),
      ],
    }).compile();
    // Migrate before init: the cache starts on bootstrap and needs the tables.
    await runMigrations(moduleRef.get(DataSource));
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef?.close();
    await database?.drop();
  });

  it('provides an initialized DataSource with the settings entities', async () => {
    const dataSource = moduleRef.get(DataSource);
    expect(dataSource.isInitialized).toBe(true);
    await expect(pingDatabase(dataSource)).resolves.toMatchObject({ ok: true });
    await expect(dataSource.getRepository(SourceEntity).count()).resolves.toBe(0);
  });

  it('provides a started SettingsCache', () => {
    const cache = moduleRef.get(SettingsCache);
    expect(cache.version).toBe(1);
    expect(cache.stats.listening).toBe(true);
    expect(cache.sourceByWriteKey(newWriteKey())).toBeUndefined();
  });

  it('stops the cache and closes the pool on shutdown', async () => {
    const dataSource = moduleRef.get(DataSource);
    const cache = moduleRef.get(SettingsCache);
    await moduleRef.close();
    expect(cache.stats.listening).toBe(false);
    expect(dataSource.isInitialized).toBe(false);
  });
});
