/**
 * The four apps as separate processes, built the way `npm run build` builds them (into a
 * directory of the suite's own, so nobody's dist/ changes), each on a fixed port so that a
 * restarted app answers where the sender and the readiness probe look.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { freePort, type Managed, sleep, type Supervisor, waitForHttp } from '../processes.mts';

export const APPS = ['ingest', 'router', 'dispatcher', 'admin'] as const;
export type AppName = (typeof APPS)[number];

/** The port variable of each app. */
const PORT_VARIABLE: Record<AppName, string> = {
  ingest: 'INGEST_PORT',
  router: 'ROUTER_PORT',
  dispatcher: 'DISPATCHER_PORT',
  admin: 'ADMIN_PORT',
};

/** Longest wait for a started app to answer /health/live. */
const START_TIMEOUT_MS = 60_000;

/** Builds the apps with package.json's build script, its `dist` replaced by a new directory. */
export function buildApps(root: string): string {
  const script = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts.build;
  if (!/(^|\s)-d dist(\s|$)/.test(script)) throw new Error(`unexpected build script: ${script}`);
  mkdirSync(join(root, '.local'), { recursive: true });
  const outDir = mkdtempSync(join(root, '.local', 'chaos-build-'));
  execFileSync('bash', ['-c', script.replace(/\bdist\b/g, outDir)], {
    cwd: root,
    env: { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}` },
    stdio: 'pipe',
  });
  return outDir;
}

/** The running apps: started, killed, stopped and started again by name. */
export class Apps {
  private readonly ports = new Map<AppName, number>();
  private readonly running = new Map<AppName, Managed>();

  private readonly buildDir: string;
  private readonly supervisor: Supervisor;
  private readonly env: () => Record<string, string>;
  private readonly nodeArgs: readonly string[];

  /** @param nodeArgs Node options for every app (a profiler, for example) */
  constructor(
    buildDir: string,
    supervisor: Supervisor,
    env: () => Record<string, string>,
    nodeArgs: readonly string[] = [],
  ) {
    this.buildDir = buildDir;
    this.supervisor = supervisor;
    this.env = env;
    this.nodeArgs = nodeArgs;
  }

  url(app: AppName): string {
    return `http://127.0.0.1:${this.ports.get(app)}`;
  }

  /** The process id of an app's current run; undefined when it never started. */
  pid(app: AppName): number | undefined {
    return this.running.get(app)?.pid;
  }

  /** Applies the migrations (admin's migrate.js), as a deployment's job would. */
  migrate(): void {
    execFileSync(process.execPath, [join(this.buildDir, 'apps/admin/src/migrate.js')], {
      env: { ...process.env, ...this.env() },
      stdio: 'pipe',
    });
  }

  async start(app: AppName): Promise<void> {
    if (!this.ports.has(app)) this.ports.set(app, await freePort());
    const managed = this.supervisor.spawn(
      app,
      process.execPath,
      [...this.nodeArgs, join(this.buildDir, 'apps', app, 'src', 'main.js')],
      {
        env: {
          ...process.env,
          ...this.env(),
          [PORT_VARIABLE[app]]: String(this.ports.get(app)),
        },
      },
    );
    this.running.set(app, managed);
    // CHAOS_LOG_DIR keeps each app's log lines (all its runs) in <app>.log, with the time seen.
    const logDir = process.env.CHAOS_LOG_DIR;
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      managed.onLine((line) =>
        appendFileSync(join(logDir, `${app}.log`), `${new Date().toISOString()} ${line}\n`),
      );
    }
    await waitForHttp(`${this.url(app)}/health/live`, managed, START_TIMEOUT_MS);
  }

  /** SIGKILL: the process ends at once, leaving its group membership to expire. */
  async kill(app: AppName): Promise<void> {
    const managed = this.running.get(app);
    if (!managed?.running) return;
    managed.child.kill('SIGKILL');
    await managed.exited;
  }

  /** SIGTERM, and waits for the graceful stop. */
  async terminate(app: AppName): Promise<void> {
    const managed = this.running.get(app);
    if (managed) await this.supervisor.stop(managed);
  }

  /** Whether an app's process stopped by itself (a crash). */
  crashed(): AppName[] {
    return APPS.filter((app) => this.running.get(app)?.running === false);
  }

  lastOutput(app: AppName): string {
    return this.running.get(app)?.describeExit() ?? '';
  }
}

/** Polls every app's /health/ready and keeps, per app, the answers seen in order (runs merged). */
export class ReadinessWatch {
  private readonly seen = new Map<AppName, string[]>();
  private active = false;
  private loop?: Promise<void>;

  private readonly apps: Apps;

  constructor(apps: Apps) {
    this.apps = apps;
  }

  start(): void {
    this.seen.clear();
    this.active = true;
    this.loop = this.poll();
  }

  /** Stops polling; returns e.g. `ingest 200, router 200>503>200, ...` */
  async stop(): Promise<Record<AppName, string>> {
    this.active = false;
    await this.loop;
    const out = {} as Record<AppName, string>;
    for (const app of APPS) {
      // The answers in the order first seen, then the last one: `200>timeout>503>200`.
      const seen = this.seen.get(app) ?? [];
      const distinct = [...new Set(seen)];
      const last = seen[seen.length - 1];
      if (last !== undefined && distinct[distinct.length - 1] !== last) distinct.push(last);
      out[app] = distinct.join('>');
    }
    return out;
  }

  private async poll(): Promise<void> {
    while (this.active) {
      await Promise.all(APPS.map((app) => this.probe(app)));
      await sleep(500);
    }
  }

  private async probe(app: AppName): Promise<void> {
    const answer = await fetch(`${this.apps.url(app)}/health/ready`, {
      signal: AbortSignal.timeout(2_000),
    }).then(
      (res) => String(res.status),
      (error: unknown) =>
        (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED'
          ? 'down'
          : 'timeout',
    );
    const list = this.seen.get(app) ?? [];
    if (list[list.length - 1] !== answer) list.push(answer);
    this.seen.set(app, list);
  }
}
