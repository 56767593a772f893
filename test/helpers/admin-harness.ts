import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';

import { loadAdminConfig } from '../../apps/admin/src/config';
import { startAdmin } from '../../apps/admin/src/main';

import { serviceEnv, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY, uniquePrefix } from './services';
import { createMigratedTestDatabase, TestDatabase } from './test-database';

/** An answer of the admin API: status and parsed JSON body (undefined when empty). */
export interface AdminAnswer {
  readonly status: number;
  readonly body: any;
  readonly text: string;
}

/** The admin app on a migrated database of its own. */
export class AdminHarness {
  app!: NestFastifyApplication;
  url!: string;
  db!: TestDatabase;

  async start(env: Record<string, string> = {}): Promise<this> {
    this.db = await createMigratedTestDatabase();
    this.app = await startAdmin(
      loadAdminConfig({
        KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
        DATABASE_URL: this.db.url,
        KAFKA_TOPIC_PREFIX: uniquePrefix('admin'),
        HTTP_HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        LOG_LEVEL: 'error',
        ADMIN_TOKENS: `other-token-that-is-long-enough-123,${TEST_ADMIN_TOKEN}`,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
        ...env,
      }),
    );
    this.url = await this.app.getUrl();
    return this;
  }

  async close(): Promise<void> {
    await this.app?.close();
    await this.db?.drop();
  }

  /** Calls the admin API with the test token (or `token`; null sends none). */
  call(
    method: string,
    path: string,
    body?: unknown,
    token: string | null = TEST_ADMIN_TOKEN,
  ): Promise<AdminAnswer> {
    return callAdmin(this.url, method, path, body, token);
  }

  async sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: this.db.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
}

/**
 * Calls the admin API at `url` (its base, e.g. `http://127.0.0.1:1234/admin/v1` or the app's
 * root) with the test token (or `token`; null sends none); a JSON answer comes parsed.
 */
export async function callAdmin(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = TEST_ADMIN_TOKEN,
): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(`${url}${path}`, { method, headers, body: payload });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') && text;
  return { status: res.status, text, body: json ? (JSON.parse(text) as unknown) : undefined };
}

/**
 * The admin app beside another harness's apps: the same database and topic prefix, the test
 * token and key, on a free port.
 */
export function startAdminBeside(
  harness: { readonly db: { readonly url: string }; readonly prefix: string },
  env: Record<string, string> = {},
): Promise<NestFastifyApplication> {
  return startAdmin(
    loadAdminConfig({
      KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
      DATABASE_URL: harness.db.url,
      KAFKA_TOPIC_PREFIX: harness.prefix,
      KAFKA_TOPIC_PARTITIONS: '2',
      HTTP_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'error',
      ADMIN_TOKENS: TEST_ADMIN_TOKEN,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
      ...env,
    }),
  );
}
