import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { randomPorts } from './ports';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');
const SERVICES = join(ROOT, 'docker', 'local', 'services.sh');

/**
 * A Kafka broker of a test's own, started and stopped by the project's local-services script,
 * for tests that take the broker away (the shared one must stay up for the others). Its data
 * survives a stop, so a restarted broker still holds what was acknowledged.
 */
export class SpareBroker {
  private readonly dir = mkdtempSync(join(tmpdir(), 'sluice-spare-kafka-'));
  /** Its port, and its controller's after it. */
  readonly port = randomPorts(2);

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await this.services('up');
  }

  async stop(): Promise<void> {
    await this.services('down');
  }

  /** Stops the broker and removes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private services(command: 'up' | 'down'): Promise<void> {
    return localBroker(command, this.dir, this.port);
  }
}

/**
 * Starts or stops a broker of its own through docker/local/services.sh: data in `dir`, the
 * listener on `port` (its controller on the next), PostgreSQL left alone; `env` adds the
 * script's opt-in settings.
 */
export async function localBroker(
  command: 'up' | 'down',
  dir: string,
  port: number,
  env: Record<string, string> = {},
): Promise<void> {
  const settings = {
    ...process.env,
    KAFKA_BROKERS: '',
    // Set, so the script leaves PostgreSQL alone.
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://unused',
    SLUICE_LOCAL_DIR: dir,
    SLUICE_LOCAL_KAFKA_PORT: String(port),
    SLUICE_LOCAL_KAFKA_CONTROLLER_PORT: String(port + 1),
    SLUICE_LOCAL_KAFKA_LIBS:
      process.env.SLUICE_LOCAL_KAFKA_LIBS ?? join(ROOT, '.local', 'kafka', 'libs'),
    ...env,
  };
  try {
    await run('bash', [SERVICES, command], { timeout: 120_000, env: settings });
  } catch (error) {
    // The broker's own log says why it stopped; the test's clean-up removes it with `dir`.
    const log = logTail(join(dir, 'kafka', 'logs', 'kafka.out'));
    throw new Error(`${String(error)}\n${log}`, { cause: error });
  }
}

/** The last lines of a log, or why there are none. */
function logTail(path: string, lines = 40): string {
  try {
    return `last lines of ${path}:\n${readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n')}`;
  } catch {
    return `(no ${path})`;
  }
}
