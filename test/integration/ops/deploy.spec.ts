import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

import { parse } from 'yaml';

import { BaseEnv } from '@app/config';

import { CONSOLE_MODULES } from '../../../apps/admin/src/console/console.routes';

import { buildToTemporaryDir, entryPoints, readRepoFile, ROOT, variablesOf } from './ops-files';

/**
 * The Docker image and the compose file run what the tests run: the image builds with
 * package.json's build script, and every entry point they name is a file that build
 * produces. (No Docker engine exists here, so the image itself is not built.)
 */

const packageJson = JSON.parse(readRepoFile('package.json')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const dockerfile = readRepoFile('docker/Dockerfile');
const compose = readRepoFile('docker/compose.yml');
const read = readRepoFile;

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) =>
    statSync(join(dir, name)).isFile(),
  );
}

describe('docker/Dockerfile and docker/compose.yml', () => {
  let outDir: string;

  beforeAll(() => {
    outDir = buildToTemporaryDir();
  });

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('builds with `npm install` and `npm run build`, and keeps production dependencies only', () => {
    const runs = dockerfile.match(/^RUN .*(\n\s+&&.*)*/gm) ?? [];
    expect(runs.join('\n')).toMatch(/npm install\b/);
    expect(runs.join('\n')).toMatch(/npm run build\b/);
    expect(runs.join('\n')).toMatch(/npm prune --omit=dev/);
    expect(dockerfile).toMatch(/^FROM node:24|^ARG NODE_IMAGE=node:24/m);
  });

  it('copies every input of the build script into the image, and .dockerignore lets them in', () => {
    const dockerignore = read('.dockerignore');
    // The build script's inputs: `swc apps libs --config-file .swcrc`.
    for (const input of ['apps', 'libs', '.swcrc', 'package.json', 'package-lock.json']) {
      const name = input.replace(/\./g, '\\.');
      expect(dockerfile).toMatch(new RegExp(`^COPY\\s(.*\\s)?(\\./)?${name}(\\s|/|$)`, 'm'));
      expect(dockerignore).toMatch(new RegExp(`^!${name}/?$`, 'm'));
    }
    expect(packageJson.scripts.build).toMatch(/swc apps libs --config-file \.swcrc/);
  });

  it('runs as a non-root user with node, no warning silenced', () => {
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node"\]$/m);
    // libs/kafka's request-queue replacement removed the cause of TimeoutNegativeWarning.
    expect(`${dockerfile}${compose}`).not.toContain('--disable-warning');
  });

  it('names only entry points that the build produces, one per app plus the migration', () => {
    const named = [...entryPoints(dockerfile), ...entryPoints(compose)];
    for (const app of ['ingest', 'admin', 'router', 'dispatcher']) {
      expect(named).toContain(`dist/apps/${app}/src/main.js`);
    }
    expect(named).toContain('dist/apps/admin/src/migrate.js');
    for (const path of named) {
      expect(existsSync(join(outDir, relative('dist', path)))).toBe(true);
    }
  });

  it("ships the operator console's files as written beside the admin app's compiled code", () => {
    const dir = 'apps/admin/src/console/static';
    for (const file of ['index.html', 'style.css', 'favicon.svg', ...CONSOLE_MODULES]) {
      expect(readFileSync(join(outDir, dir, file))).toEqual(readFileSync(join(ROOT, dir, file)));
    }
  });

  it('needs at run time only packages listed as production dependencies', () => {
    const builtins = new Set(builtinModules);
    const missing = new Set<string>();
    for (const file of filesUnder(outDir).filter((name) => name.endsWith('.js'))) {
      const text = readFileSync(join(outDir, file), 'utf8');
      for (const [, specifier] of text.matchAll(/require\("([^".][^"]*)"\)/g)) {
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0];
        if (builtins.has(name) || name.startsWith('node:')) continue;
        if (!(name in packageJson.dependencies)) missing.add(`${name} (${file})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('is a valid compose file for docker-compose', () => {
    // Debian's docker-compose 1.29 (.ci/run installs it): `config -q` parses and validates.
    expect(() =>
      execFileSync('docker-compose', ['-f', 'docker/compose.yml', 'config', '-q'], {
        cwd: ROOT,
        stdio: 'pipe',
      }),
    ).not.toThrow();
  });

  it('sets only variables the apps read', () => {
    const services = (parse(compose, { merge: true }) as { services: Record<string, any> })
      .services;
    for (const app of ['ingest', 'admin', 'router', 'dispatcher']) {
      const known = variablesOf(app);
      const unknown = Object.keys(services[app].environment).filter((name) => !known.has(name));
      expect({ app, unknown }).toEqual({ app, unknown: [] });
    }
  });

  it("gives every app longer to stop than its own shutdown timeout before Docker's SIGKILL", () => {
    const services = (parse(compose, { merge: true }) as { services: Record<string, any> })
      .services;
    const shutdownMs = new BaseEnv().SHUTDOWN_TIMEOUT_MS;
    for (const app of ['ingest', 'admin', 'router', 'dispatcher']) {
      const grace = /^(\d+)s$/.exec(String(services[app].stop_grace_period));
      const graceMs = grace ? Number(grace[1]) * 1_000 : 0;
      // The app's own timer ends it after SHUTDOWN_TIMEOUT_MS; a few seconds more to exit.
      expect({ app, longEnough: graceMs >= shutdownMs + 5_000 }).toEqual({ app, longEnough: true });
    }
  });

  it('scrapes every app in Prometheus and provisions the dashboard in Grafana', () => {
    const prometheus = read('docker/prometheus/prometheus.yml');
    for (const target of ['ingest:8080', 'admin:8081', 'router:8082', 'dispatcher:8083']) {
      expect(prometheus).toContain(target);
      expect(compose).toContain(`${target.split(':')[1]}:${target.split(':')[1]}`);
    }
    expect(compose).toContain('./grafana/dashboards:/etc/grafana/dashboards:ro');
    expect(read('docker/grafana/provisioning/dashboards/sluice.yml')).toContain(
      'path: /etc/grafana/dashboards',
    );
    expect(compose).toMatch(/DISPATCHER_ALLOWED_CIDRS: \$\{DISPATCHER_ALLOWED_CIDRS:-\}/);
  });
});
