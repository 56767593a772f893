import { SETTINGS_MIGRATIONS } from './migrations/settings-migrations';
import { createSettingsDataSource, pingDatabase } from './settings.data-source';

describe(createSettingsDataSource.name, () => {
  it('never synchronizes the schema nor runs migrations by itself', () => {
    const { options } = createSettingsDataSource({ url: 'postgres://u:p@h/db' });
    expect(options).toMatchObject({ synchronize: false, migrationsRun: false });
  });

  it('lists the settings entities and migrations', () => {
    const { options } = createSettingsDataSource({ url: 'postgres://u:p@h/db' });
    expect(options.entities).toHaveLength(10);
    expect(options.migrations).toEqual(SETTINGS_MIGRATIONS);
    expect(options.migrations?.length).toBeGreaterThanOrEqual(5);
  });

  it('applies the pool size and default connect timeout', () => {
    const { options } = createSettingsDataSource({ url: 'postgres://u:p@h/db', poolSize: 3 });
    expect(options).toMatchObject({ poolSize: 3, connectTimeoutMS: 5_000 });
  });
});

describe(pingDatabase.name, () => {
  it('reports a DataSource that was never initialized', async () => {
    const dataSource = createSettingsDataSource({ url: 'postgres://u:p@h/db' });
    await expect(pingDatabase(dataSource)).resolves.toEqual({
      ok: false,
      reason: 'data source not initialized',
    });
  });
});
