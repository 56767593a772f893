import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

import { Webhook, WebhookVerificationError } from 'standardwebhooks';

import { ReceivedRequest } from './webhook-receiver';

/**
 * Receivers built on the official Standard Webhooks libraries: npm's `standardwebhooks` in
 * process, PyPI's `standardwebhooks` in the venv `docker/local/tools.sh` makes under .local,
 * and the Go library in a small program built here. Each verifies recorded requests, with
 * the timestamp tolerance of its library, holding one secret at a time.
 */

const ROOT = join(__dirname, '..', '..');
const PYTHON = join(ROOT, '.local', 'venv', 'bin', 'python');
const PYTHON_VERIFIER = join(__dirname, 'standard-webhooks', 'verify.py');
const GO_VERIFIER_DIR = join(__dirname, 'standard-webhooks', 'go');

/** What each secret (by a name of the test's) made of each delivery: verified or not. */
export type Verdicts = Record<string, boolean[]>;

/** A recorded request as the verifiers take it. */
interface Delivery {
  readonly headers: Record<string, string>;
  readonly body: string;
}

function deliveries(requests: readonly ReceivedRequest[]): Delivery[] {
  return requests.map((r) => ({
    headers: Object.fromEntries(
      Object.entries(r.headers).map(([name, value]) => [name, String(value)]),
    ),
    body: r.body.toString('base64'),
  }));
}

/** npm's `standardwebhooks`. */
export function verifyWithNode(
  secrets: Record<string, string>,
  requests: readonly ReceivedRequest[],
): Verdicts {
  const verdicts: Verdicts = {};
  for (const [name, secret] of Object.entries(secrets)) {
    const webhook = new Webhook(secret);
    verdicts[name] = requests.map((r) => {
      const headers = Object.fromEntries(
        Object.entries(r.headers).map(([key, value]) => [key, String(value)]),
      );
      try {
        webhook.verify(r.body, headers);
        return true;
      } catch (error) {
        if (error instanceof WebhookVerificationError) return false;
        throw error;
      }
    });
  }
  return verdicts;
}

/** PyPI's `standardwebhooks`, in the venv of `docker/local/tools.sh`. */
export function verifyWithPython(
  secrets: Record<string, string>,
  requests: readonly ReceivedRequest[],
): Promise<Verdicts> {
  return run(PYTHON, [PYTHON_VERIFIER], { secrets, deliveries: deliveries(requests) });
}

/** The Go library's verifier, built once into a temporary directory. */
export class GoVerifier {
  private constructor(
    private readonly dir: string,
    private readonly binary: string,
  ) {}

  /** Builds the program (its module is fetched by `docker/local/tools.sh`). */
  static async build(timeoutMs: number): Promise<GoVerifier> {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-swh-go-'));
    const binary = join(dir, 'verifier');
    await exec(goBinary(), ['build', '-o', binary, '.'], GO_VERIFIER_DIR, timeoutMs);
    return new GoVerifier(dir, binary);
  }

  verify(secrets: Record<string, string>, requests: readonly ReceivedRequest[]): Promise<Verdicts> {
    return run(this.binary, [], { secrets, deliveries: deliveries(requests) });
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `$SLUICE_GO`, else go on PATH, else /usr/local/go/bin/go (as `docker/local/tools.sh`). */
function goBinary(): string {
  if (process.env.SLUICE_GO) return process.env.SLUICE_GO;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const candidate of [...dirs.map((dir) => join(dir, 'go')), '/usr/local/go/bin/go']) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there
    }
  }
  throw new Error('go is not found: the Standard Webhooks Go verifier needs Go 1.21 or later');
}

function exec(file: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd, timeout: timeoutMs, env: { ...process.env, GOFLAGS: '' } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

function run(file: string, args: string[], input: unknown): Promise<Verdicts> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${file}: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as Verdicts);
      },
    );
    child.stdin!.end(JSON.stringify(input));
  });
}
