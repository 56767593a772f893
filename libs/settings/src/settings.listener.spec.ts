import { LISTENER_APPLICATION_NAME, listenerClientConfig } from './settings.listener';

describe(listenerClientConfig.name, () => {
  it('connects where the DataSource does, under its own application name', () => {
    const config = listenerClientConfig({ type: 'postgres', url: 'postgres://u:p@h:5433/db' });
    expect(config).toMatchObject({
      connectionString: 'postgres://u:p@h:5433/db',
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
    });
  });

  it('carries discrete connection options too', () => {
    const config = listenerClientConfig({
      type: 'postgres',
      host: 'h',
      port: 5433,
      username: 'u',
      password: 'p',
      database: 'db',
      connectTimeoutMS: 1_234,
    });
    expect(config).toMatchObject({
      host: 'h',
      port: 5433,
      user: 'u',
      password: 'p',
      database: 'db',
      connectionTimeoutMillis: 1_234,
    });
  });

  it('refuses a DataSource of another database type', () => {
    expect(() => listenerClientConfig({ type: 'better-sqlite3', database: ':memory:' })).toThrow(
      'postgres',
    );
  });
});
