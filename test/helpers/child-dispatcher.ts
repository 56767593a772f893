import { ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { buildToTemporaryDir } from './build';

/**
 * A dispatcher run as a process of its own, built the way `npm run build` builds it (SWC) into
 * a directory of its own, so that a test can kill it mid-run and start it again.
 */
export class ChildDispatcher {
  private buildDir?: string;
  private child?: ChildProcess;

  /** Builds the apps; call once, before {@link start}. */
  build(): void {
    this.buildDir = buildToTemporaryDir();
  }

  /** Starts a dispatcher with `env` added to this process's environment. */
  start(env: Record<string, string>): void {
    if (!this.buildDir) throw new Error('ChildDispatcher.build() first');
    const main = join(this.buildDir, 'apps', 'dispatcher', 'src', 'main.js');
    this.child = spawn(process.execPath, [main], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }

  /** Sends `signal` to the running dispatcher and waits until it exited. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const proc = this.child;
    if (!proc) return;
    this.child = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
  }

  /** Stops a dispatcher still running and removes the build. */
  async close(): Promise<void> {
    await this.stop('SIGTERM');
    if (this.buildDir) rmSync(this.buildDir, { recursive: true, force: true });
  }
}
