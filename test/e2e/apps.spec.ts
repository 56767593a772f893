import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadAdminConfig } from '../../apps/admin/src/config';
import { startAdmin } from '../../apps/admin/src/main';
import { loadDispatcherConfig } from '../../apps/dispatcher/src/config';
import { startDispatcher } from '../../apps/dispatcher/src/main';
import { loadIngestConfig } from '../../apps/ingest/src/config';
import { startIngest } from '../../apps/ingest/src/main';
import { loadRouterConfig } from '../../apps/router/src/config';
import { startRouter } from '../../apps/router/src/main';
import { ConfigError } from '@app/config';

import {
  eventually,
  serviceEnv,
  TEST_ADMIN_TOKEN,
  TEST_SECRETS_KEY,
  uniquePrefix,
} from '../helpers/services';
import { createMigratedTestDatabase, type TestDatabase } from '../helpers/test-database';

const APPS = {
  ingest: { load: loadIngestConfig, start: startIngest, port: 'INGEST_PORT' },
  admin: { load: loadAdminConfig, start: startAdmin, port: 'ADMIN_PORT' },
  router: { load: loadRouterConfig, start: startRouter, port: 'ROUTER_PORT' },
  dispatcher: { load: loadDispatcherConfig, start: startDispatcher, port: 'DISPATCHER_PORT' },
} as const;

type AppName = keyof typeof APPS;

function env(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { kafkaBrokers, databaseUrl } = serviceEnv();
  return {
    KAFKA_BROKERS: kafkaBrokers.join(','),
    DATABASE_URL: databaseUrl,
    KAFKA_TOPIC_PREFIX: uniquePrefix('apps'),
    KAFKA_TOPIC_PARTITIONS: '2',
    HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    INGEST_PORT: '0',
    ADMIN_PORT: '0',
    ROUTER_PORT: '0',
    DISPATCHER_PORT: '0',
    ADMIN_TOKENS: TEST_ADMIN_TOKEN,
    SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
    ...overrides,
  };
}

describe('every app boots against the real broker and database', () => {
  const started = new Map<AppName, NestFastifyApplication>();
  let database: TestDatabase;

  beforeAll(async () => {
    // A migrated database of its own: DATABASE_URL's database is left as the services made it.
    database = await createMigratedTestDatabase();
    const shared = env({ DATABASE_URL: database.url });
    for (const [name, app] of Object.entries(APPS) as [AppName, (typeof APPS)[AppName]][]) {
      // Each entry pairs an app's loader with its starter; TypeScript cannot see that.
      const start = app.start as (
        config: ReturnType<typeof app.load>,
      ) => ReturnType<typeof app.start>;
      started.set(name, await start(app.load(shared)));
    }
  });

  afterAll(async () => {
    for (const app of [...started.values()].reverse()) await app.close();
    await database?.drop();
  });

  it.each(Object.keys(APPS) as AppName[])('%s answers /health/live', async (name) => {
    const res = await fetch(`${await started.get(name)!.getUrl()}/health/live`);
    expect(res.status).toBe(200);
    await expect(res.json()).resolves.toEqual({ status: 'ok' });
  });

  it.each(Object.keys(APPS) as AppName[])(
    '%s is ready: Kafka, PostgreSQL, its settings and its consumers answered',
    async (name) => {
      const url = `${await started.get(name)!.getUrl()}/health/ready`;
      // Consumers join their groups in the background, after the app answers HTTP.
      const body = await eventually(async () => {
        const res = await fetch(url);
        const json = (await res.json()) as { status: string };
        return res.status === 200 && json.status === 'ok' ? json : undefined;
      });
      expect(body).toEqual({
        status: 'ok',
        checks: { kafka: 'up', settings: 'up', postgres: 'up', consumers: 'up' },
      });
    },
  );

  it.each(Object.keys(APPS) as AppName[])('%s serves Prometheus metrics', async (name) => {
    const res = await fetch(`${await started.get(name)!.getUrl()}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const body = await res.text();
    expect(body).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(body).toContain(`app="${name}"`);
    // Every app asked the broker for metadata when it connected.
    expect(body).toMatch(/^sluice_kafka_requests_total\{[^}]*api="Metadata"[^}]*\} [1-9]/m);
  });
});

describe('configuration', () => {
  it.each(Object.keys(APPS) as AppName[])(
    '%s refuses a bad variable, naming it and not its value',
    (name) => {
      const app = APPS[name];
      const secret = 'postgres://user:hunter2@db';
      const bad = env({ DATABASE_URL: 'mysql://user:hunter2@db', [app.port]: '99999' });
      let error: unknown;
      try {
        app.load(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toContain('DATABASE_URL');
      expect(message).toContain(app.port);
      expect(message).not.toContain('hunter2');
      expect(message).not.toContain(secret);
      expect(message).not.toContain('99999');
    },
  );

  it('requires KAFKA_BROKERS and DATABASE_URL', () => {
    expect(() => loadRouterConfig({})).toThrow(
      /KAFKA_BROKERS[\s\S]*DATABASE_URL|DATABASE_URL[\s\S]*KAFKA_BROKERS/,
    );
  });
});
