import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** An app's `/health/ready` answer. */
export interface ReadyAnswer {
  readonly status: number;
  readonly body: { status?: string; checks?: Record<string, 'up' | 'down'> };
}

/** A free TCP port on the loopback address (taken by the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * One app run as its own process from a build (`buildToTemporaryDir`), on a fixed port so that
 * a restarted process answers at the same address. Its stderr goes to the test's.
 */
export class AppProcess {
  private child?: ChildProcess;

  constructor(
    private readonly buildDir: string,
    /** `ingest`, `router`, `dispatcher` or `admin`. */
    readonly app: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process (it then connects, and listens once its HTTP server is up). */
  start(): this {
    const main = join(this.buildDir, 'apps', this.app, 'src', 'main.js');
    this.child = spawn(process.execPath, [main], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return this;
  }

  /** Sends `signal` and waits until the process has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return null;
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    child.kill(signal);
    return exited;
  }

  /** `/health/ready`, or undefined while nothing listens. */
  async ready(): Promise<ReadyAnswer | undefined> {
    try {
      const res = await fetch(`${this.url}/health/ready`);
      return { status: res.status, body: (await res.json()) as ReadyAnswer['body'] };
    } catch {
      return undefined;
    }
  }
}
