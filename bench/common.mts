// Pieces both benches (ingest and router) share: settings reading, one-step database
// connections, tearing a stand down, and the main loop with its signal handling.
import type { Admin } from 'kafkajs';
import pg from 'pg';

import { deleteTopicsWithPrefix } from './kafka.mts';
import type { Supervisor } from './processes.mts';

/** A progress line on stderr (stdout carries only the report). */
export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Readers of BENCH_* and service variables that throw naming the variable. */
export function envReader(env: NodeJS.ProcessEnv, command: string) {
  return {
    number: (name: string, fallback: number, min: number, max: number): number => {
      const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
      if (!Number.isInteger(value) || value < min || value > max) {
        throw new Error(`${name} must be a whole number from ${min} to ${max}`);
      }
      return value;
    },
    required: (name: string): string => {
      const value = env[name];
      if (!value) throw new Error(`${name} is not set; run through npm run ${command}`);
      return value;
    },
  };
}

/**
 * A connection for one step only: the local PostgreSQL may be restarted while a bench runs
 * (other test suites share it), which would break a connection held throughout.
 */
export async function withDatabase<T>(
  databaseUrl: string,
  step: (database: pg.Client) => Promise<T>,
): Promise<T> {
  const database = new pg.Client({ connectionString: databaseUrl });
  database.on('error', () => undefined); // the failing query reports it
  await database.connect();
  try {
    return await step(database);
  } finally {
    await database.end();
  }
}

/** What a stand made and must remove. */
export interface StandResources {
  readonly supervisor: Supervisor;
  readonly databaseUrl: string;
  readonly sourceId?: string;
  /** More source rows, for a stand with several sources. */
  readonly sourceIds?: readonly string[];
  readonly admin?: Admin;
  /** Prefix of the stand's topics and consumer groups. */
  readonly prefix: string;
}

/**
 * Stops the stand's processes and removes its source row (its usage rows go with it), topics
 * and consumer groups; every step is tried, and failures are reported, not thrown.
 */
export async function removeStand(stand: StandResources): Promise<void> {
  const problems: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
    } catch (error) {
      problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  await stand.supervisor.stopAll();
  const { admin } = stand;
  const sourceIds = [...(stand.sourceId ? [stand.sourceId] : []), ...(stand.sourceIds ?? [])];
  if (sourceIds.length > 0) {
    await attempt('delete source', () =>
      withDatabase(stand.databaseUrl, (db) =>
        db.query('DELETE FROM source WHERE id = ANY($1::uuid[])', [sourceIds]),
      ),
    );
  }
  if (admin) {
    await attempt('delete topics', () => deleteTopicsWithPrefix(admin, stand.prefix));
    await attempt('delete consumer groups', async () => {
      const { groups } = await admin.listGroups();
      const ours = groups.map((g) => g.groupId).filter((id) => id.startsWith(stand.prefix));
      if (ours.length > 0) await admin.deleteGroups(ours);
    });
    await attempt('close Kafka admin', () => admin.disconnect());
  }
  for (const problem of problems) process.stderr.write(`cleanup: ${problem}\n`);
}

/** A bench as `runBench` drives it. */
export interface Bench {
  readonly supervisor: Pick<Supervisor, 'killAllNow'>;
  readonly stand: { tearDown(): Promise<void> };
  run(): Promise<string>;
}

/** Runs a bench; cleans up on success, failure, Ctrl-C and SIGTERM alike. */
export function runBench(bench: Bench): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) {
        bench.supervisor.killAllNow();
        process.exit(130);
      }
      interrupted = true;
      progress(`${signal}: stopping and cleaning up (again to stop at once)`);
      void bench.stand.tearDown().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => bench.supervisor.killAllNow());
  const started = Date.now();
  const main = async () => {
    try {
      const report = await bench.run();
      progress('cleaning up');
      await bench.stand.tearDown();
      process.stdout.write(
        `${report}\nfinished in ${Math.round((Date.now() - started) / 1000)} s\n`,
      );
    } catch (error) {
      if (interrupted) return;
      await bench.stand.tearDown();
      throw error;
    }
  };
  main().catch((error: unknown) => {
    progress(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
