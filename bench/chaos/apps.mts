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

/** One process of an app: the app and its replica number (1, 2, ...; a new one per surge). */
export interface Instance {
  readonly app: AppName;
  readonly replica: number;
}

/** How a stand names and places its apps' processes. */
export interface AppsOptions {
  /** Node options for every app (a profiler, for example). */
  readonly nodeArgs?: readonly string[];
  /**
   * Fixed ports from here: each app 20 replicas' ports, in APPS order (ingest's replica 1 at
   * base + 1). Unset, each replica gets a free port when first started.
   */
  readonly portBase?: number;
  /** Labels `ingest.1`, `ingest.2` (several replicas) instead of `ingest`. */
  readonly replicaLabels?: boolean;
}

/** Ports an app's replicas may take from {@link AppsOptions.portBase}. */
const PORTS_PER_APP = 20;

/** The running apps: started, killed, stopped and started again by name and replica. */
export class Apps {
  private readonly ports = new Map<string, number>();
  private readonly running = new Map<string, Managed>();
  /** Every instance started, in order; retired ones are no longer watched. */
  private readonly known = new Map<string, Instance>();
  private readonly retired = new Set<string>();
  /** Instances answering HTTP and not retired: where a load balancer would send requests. */
  private readonly inService = new Set<string>();
  private readonly handedOut = new Map<AppName, number>();

  private readonly buildDir: string;
  private readonly supervisor: Supervisor;
  private readonly env: () => Record<string, string>;
  private readonly options: AppsOptions;

  constructor(
    buildDir: string,
    supervisor: Supervisor,
    env: () => Record<string, string>,
    options: AppsOptions = {},
  ) {
    this.buildDir = buildDir;
    this.supervisor = supervisor;
    this.env = env;
    this.options = options;
  }

  /** `ingest`, or `ingest.2` with replica labels. */
  label(app: AppName, replica = 1): string {
    return this.options.replicaLabels ? `${app}.${replica}` : app;
  }

  url(app: AppName, replica = 1): string {
    return `http://127.0.0.1:${this.ports.get(this.label(app, replica))}`;
  }

  /** The process id of an instance's current run; undefined when it never started. */
  pid(app: AppName, replica = 1): number | undefined {
    return this.running.get(this.label(app, replica))?.pid;
  }

  /** Instances started and not retired (running or not), in the order first started. */
  instances(app?: AppName): Instance[] {
    return [...this.known.entries()]
      .filter(([label, i]) => !this.retired.has(label) && (app === undefined || i.app === app))
      .map(([, i]) => i);
  }

  /** The instances of an app in service (started, answering, not retired nor killed). */
  serving(app: AppName): Instance[] {
    return this.instances(app).filter((i) => this.inService.has(this.label(i.app, i.replica)));
  }

  /** A new replica number for an app (one above any started or handed out before). */
  nextReplica(app: AppName): number {
    const started = [...this.known.values()].filter((i) => i.app === app).map((i) => i.replica);
    const next = Math.max(0, this.handedOut.get(app) ?? 0, ...started) + 1;
    this.handedOut.set(app, next);
    return next;
  }

  /** Applies the migrations (admin's migrate.js), as a deployment's job would. */
  migrate(): void {
    execFileSync(process.execPath, [join(this.buildDir, 'apps/admin/src/migrate.js')], {
      env: { ...process.env, ...this.env() },
      stdio: 'pipe',
    });
  }

  async start(app: AppName, replica = 1): Promise<void> {
    const label = this.label(app, replica);
    if (!this.ports.has(label)) this.ports.set(label, await this.port(app, replica));
    const managed = this.supervisor.spawn(
      label,
      process.execPath,
      [...(this.options.nodeArgs ?? []), join(this.buildDir, 'apps', app, 'src', 'main.js')],
      {
        env: {
          ...process.env,
          ...this.env(),
          [PORT_VARIABLE[app]]: String(this.ports.get(label)),
        },
      },
    );
    this.running.set(label, managed);
    this.known.set(label, { app, replica });
    this.retired.delete(label);
    // CHAOS_LOG_DIR keeps each instance's log lines (all its runs) in <label>.log, with the
    // time seen; stderr (Node's warnings) included.
    const logDir = process.env.CHAOS_LOG_DIR;
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      const keep = (line: string) =>
        appendFileSync(join(logDir, `${label}.log`), `${new Date().toISOString()} ${line}\n`);
      managed.onLine(keep);
      managed.onErrorLine(keep);
    }
    await waitForHttp(`${this.url(app, replica)}/health/live`, managed, START_TIMEOUT_MS);
    this.inService.add(label);
  }

  /** SIGKILL: the process ends at once, leaving its group membership to expire. */
  async kill(app: AppName, replica = 1): Promise<void> {
    const managed = this.running.get(this.label(app, replica));
    this.inService.delete(this.label(app, replica));
    if (!managed?.running) return;
    managed.child.kill('SIGKILL');
    await managed.exited;
  }

  /** SIGTERM, and waits for the graceful stop. */
  async terminate(app: AppName, replica = 1): Promise<void> {
    const managed = this.running.get(this.label(app, replica));
    this.inService.delete(this.label(app, replica));
    if (managed) await this.supervisor.stop(managed);
  }

  /** SIGTERM for good (a replaced or scaled-down replica): readiness no longer watches it. */
  async retire(app: AppName, replica: number): Promise<void> {
    this.retired.add(this.label(app, replica));
    await this.terminate(app, replica);
  }

  /** Instances whose process stopped by itself (a crash). */
  crashed(): Instance[] {
    return this.instances().filter(
      (i) => this.running.get(this.label(i.app, i.replica))?.running === false,
    );
  }

  lastOutput(app: AppName, replica = 1): string {
    return this.running.get(this.label(app, replica))?.describeExit() ?? '';
  }

  private port(app: AppName, replica: number): Promise<number> {
    const base = this.options.portBase;
    if (base === undefined) return freePort();
    if (replica >= PORTS_PER_APP)
      throw new Error(`${app}: more than ${PORTS_PER_APP - 1} replicas`);
    return Promise.resolve(base + APPS.indexOf(app) * PORTS_PER_APP + replica);
  }
}

/**
 * Polls every watched instance's /health/ready and keeps, per instance, the answers seen in
 * order (runs merged).
 */
export class ReadinessWatch {
  private readonly seen = new Map<string, string[]>();
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

  /** Stops polling; returns e.g. `ingest 200, router 200>503>200, ...` by instance label. */
  async stop(): Promise<Record<string, string>> {
    this.active = false;
    await this.loop;
    const out: Record<string, string> = {};
    for (const [label, seen] of this.seen) {
      // The answers in the order first seen, then the last one: `200>timeout>503>200`.
      const distinct = [...new Set(seen)];
      const last = seen[seen.length - 1];
      if (last !== undefined && distinct[distinct.length - 1] !== last) distinct.push(last);
      out[label] = distinct.join('>');
    }
    return out;
  }

  private async poll(): Promise<void> {
    while (this.active) {
      await Promise.all(this.apps.instances().map((i) => this.probe(i)));
      await sleep(500);
    }
  }

  private async probe({ app, replica }: Instance): Promise<void> {
    const answer = await readiness(this.apps.url(app, replica));
    const label = this.apps.label(app, replica);
    const list = this.seen.get(label) ?? [];
    if (list[list.length - 1] !== answer) list.push(answer);
    this.seen.set(label, list);
  }
}

/** One /health/ready answer: its status, `down` (refused) or `timeout` (none in 2 s). */
export function readiness(url: string): Promise<string> {
  return fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
    (res) => String(res.status),
    (error: unknown) =>
      (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED' ? 'down' : 'timeout',
  );
}
