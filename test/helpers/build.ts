import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root. */
export const ROOT = join(__dirname, '../..');

/**
 * Runs package.json's build script with its output directory moved from dist/ (which others
 * may be running from) to a new directory under .local/, and returns that directory: the apps
 * as `npm run build` builds them, for tests that run one as its own process (inside the
 * repository, so that the build finds its node_modules).
 */
export function buildToTemporaryDir(): string {
  const script = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts.build;
  if (!/(^|\s)-d dist(\s|$)/.test(script)) throw new Error(`unexpected build script: ${script}`);
  mkdirSync(join(ROOT, '.local'), { recursive: true });
  const outDir = mkdtempSync(join(ROOT, '.local', 'test-build-'));
  execFileSync('bash', ['-c', script.replace(/\bdist\b/g, outDir)], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` },
    stdio: 'pipe',
  });
  return outDir;
}
