import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The Go module's directory: `go` commands run here. */
export const GO_MODULE_DIR = __dirname;

/** What a `go` command did. */
export interface GoResult {
  /** The exit code; null when the command was killed (timeout). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The `go` binary on PATH; throws with a clear message when there is none. */
export function goBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'go');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(
    '`go` is not on PATH: the Go client library (libs/analytics-go) needs Go 1.23 or later ' +
      '(for example add /usr/local/go/bin to PATH)',
  );
}

/**
 * Runs `go <args>` in the module's directory, offline: the module has no dependencies, so
 * the module proxy is turned off and the installed toolchain is used as is.
 */
export function runGo(args: readonly string[], timeoutMs: number): Promise<GoResult> {
  const go = goBinary();
  return new Promise((resolve) => {
    execFile(
      go,
      args,
      {
        cwd: GO_MODULE_DIR,
        env: { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '' },
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A failed command's output, for the test's failure message. */
export function describeFailure(args: readonly string[], result: GoResult): string {
  return `go ${args.join(' ')} exited with ${result.code ?? 'a signal (timeout?)'}:\n${result.stdout}\n${result.stderr}`;
}
