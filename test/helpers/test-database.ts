import { randomBytes } from 'node:crypto';

import { Client } from 'pg';

import { createSettingsDataSource, runMigrations } from '@app/settings';

import { eventually } from './services';

/** A throw-away database created for one test file. */
export interface TestDatabase {
  /** Its name, `sluice_test_<random hex>`. */
  readonly name: string;
  /** A URL that reaches it with the DATABASE_URL credentials. */
  readonly url: string;
  /** Runs SQL on the server through the DATABASE_URL connection (not inside this database). */
  admin(sql: string): Promise<void>;
  /** Drops it, terminating any connection left open. */
  drop(): Promise<void>;
}

/** The DATABASE_URL the integration tests run against; fails clearly when it is missing. */
export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL must point at a PostgreSQL server for these tests');
  return url;
}

/** Creates `sluice_test_<random>` through the DATABASE_URL connection. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `sluice_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  await runOnServer(`CREATE DATABASE "${name}"`);
  return {
    name,
    url: url.toString(),
    admin: (sql) => runOnServer(sql),
    drop: () => dropDatabase(name),
  };
}

/**
 * Drops a database, ending its connections. An autovacuum worker busy in it belongs to the
 * superuser, and FORCE may not end it for the tests' role (42501): that worker is done in a
 * moment, so the drop is tried again for a while.
 */
async function dropDatabase(name: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await runOnServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '42501' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Runs one statement over a short-lived connection to the DATABASE_URL database. */
async function runOnServer(sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Polls `check` until it returns true, failing after `timeoutMs` (see `eventually`). */
export async function waitFor(
  description: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), timeoutMs, description);
}

/** A write key long enough for the `source_write_key_length_check` constraint. */
export function newWriteKey(): string {
  return `wk_${randomBytes(16).toString('hex')}`;
}

/** A throw-away database with the settings migrations applied. */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  const dataSource = await createSettingsDataSource({
    url: database.url,
    poolSize: 1,
  }).initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  return database;
}
