/**
 * The chaos suite's own Kafka broker and PostgreSQL cluster, on random loopback ports, each
 * stopped and started again by the suite (the shared local services are never touched).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { freePort } from '../processes.mts';

const run = promisify(execFile);

/** A single-node broker started by docker/local/services.sh in a directory of its own. */
export class ChaosBroker {
  readonly dir = mkdtempSync(join(tmpdir(), 'sluice-chaos-kafka-'));
  private port = 0;

  private readonly root: string;
  private readonly kafkaLibs: string;

  constructor(root: string, kafkaLibs: string) {
    this.root = root;
    this.kafkaLibs = kafkaLibs;
  }

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The broker's process id while it runs (services.sh keeps it in kafka/kafka.pid). */
  pid(): number | undefined {
    try {
      return Number(readFileSync(join(this.dir, 'kafka', 'kafka.pid'), 'utf8').trim());
    } catch {
      return undefined;
    }
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    await this.services('up');
  }

  async stop(): Promise<void> {
    await this.services('down');
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private services(command: 'up' | 'down'): Promise<void> {
    return localBroker(this.root, command, this.dir, this.port, this.kafkaLibs);
  }
}

/**
 * Starts or stops a broker of the suite's own through docker/local/services.sh: data in `dir`,
 * the listener on `port`, its controller on the next, PostgreSQL left alone; `env` adds the
 * script's opt-in settings (a cluster's node properties and id).
 */
export async function localBroker(
  root: string,
  command: 'up' | 'down',
  dir: string,
  port: number,
  kafkaLibs: string,
  env: Record<string, string> = {},
): Promise<void> {
  await run('bash', [join(root, 'docker', 'local', 'services.sh'), command], {
    timeout: 180_000,
    env: {
      ...process.env,
      KAFKA_BROKERS: '',
      // Set, so the script leaves PostgreSQL alone.
      DATABASE_URL: 'postgres://unused',
      SLUICE_LOCAL_DIR: dir,
      SLUICE_LOCAL_KAFKA_PORT: String(port),
      SLUICE_LOCAL_KAFKA_CONTROLLER_PORT: String(port + 1),
      SLUICE_LOCAL_KAFKA_LIBS: kafkaLibs,
      ...env,
    },
  });
}

/**
 * A PostgreSQL cluster made with initdb in a temporary directory. initdb and postgres refuse
 * to run as root, so as root they run as the `postgres` user (runuser), which owns the folder.
 */
export class ChaosPostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'sluice-chaos-pg-'));
  private port = 0;
  private readonly bin = postgresBin();
  private readonly asRoot = process.getuid?.() === 0;

  get url(): string {
    return `postgres://sluice:sluice@127.0.0.1:${this.port}/sluice`;
  }

  /** Makes the cluster, starts it, and creates the `sluice` role and database. */
  async create(): Promise<void> {
    this.port = await freePort();
    if (this.asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const gid = await run('id', ['-g', 'postgres']);
      chownSync(this.dir, Number(stdout.trim()), Number(gid.stdout.trim()));
    }
    await this.pg('initdb', [
      '-D',
      this.data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--no-locale',
    ]);
    await this.start();
    const sql = "CREATE ROLE sluice LOGIN PASSWORD 'sluice'; CREATE DATABASE sluice OWNER sluice;";
    for (const statement of sql.split(';').filter((s) => s.trim())) {
      await this.pg('psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(this.port),
        '-U',
        'postgres',
        '-X',
        '-q',
        '-d',
        'postgres',
        '-c',
        statement,
      ]);
    }
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`;
    await this.pg('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'postgres.log'),
      '-w',
      '-o',
      options,
      'start',
    ]);
  }

  async stop(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  private async pg(tool: string, args: string[]): Promise<void> {
    const command = join(this.bin, tool);
    if (this.asRoot)
      await run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 });
    else await run(command, args, { timeout: 60_000 });
  }
}

/** The binaries of the newest PostgreSQL installed (Debian layout), or SLUICE_LOCAL_PG_VERSION's. */
function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const wanted = process.env.SLUICE_LOCAL_PG_VERSION;
  const versions = wanted
    ? [wanted]
    : existsSync(base)
      ? readdirSync(base).sort((a, b) => Number(b) - Number(a))
      : [];
  const found = versions
    .map((v) => join(base, v, 'bin'))
    .find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error(`no PostgreSQL binaries (initdb) under ${base}`);
  return found;
}
