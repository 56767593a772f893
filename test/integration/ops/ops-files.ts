import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root. */
export const ROOT = join(__dirname, '../../..');

/** A file of the repository, as text. */
export function readRepoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Every `dist/....js` path a text names. */
export function entryPoints(text: string): string[] {
  return [...new Set(text.match(/dist\/[\w./-]+\.js/g) ?? [])];
}

export { buildToTemporaryDir } from '../../helpers/build';

/**
 * The helm binary: $HELM, else the one .ci/run builds into .local/bin, else helm on PATH.
 */
export function helmBinary(): string {
  if (process.env.HELM) return process.env.HELM;
  const local = join(ROOT, '.local/bin/helm');
  return existsSync(local) ? local : 'helm';
}

/**
 * The environment variables an app reads: the property names of its config class and of
 * BaseEnv (each app's config.ts is the only reader of process.env).
 */
export function variablesOf(app: string): Set<string> {
  const names = new Set<string>();
  for (const file of ['libs/config/src/base.env.ts', `apps/${app}/src/config.ts`]) {
    for (const [, name] of readRepoFile(file).matchAll(/^ {2}([A-Z][A-Z0-9_]+)[!?]?:/gm)) {
      names.add(name);
    }
  }
  return names;
}

/**
 * The metric names a PromQL expression selects: `name{...}`, `name[...]` and the
 * alternatives of `{__name__=~"a_(b|c)_d"}`, histogram suffixes (_bucket, _sum, _count) removed.
 */
export function alertMetricNames(expr: string): string[] {
  // Outside quoted strings (label values such as "sluice[.]deliveries[.]retry").
  const unquoted = expr.replace(/"[^"]*"/g, '""');
  const names = [...unquoted.matchAll(/\b([a-z_][a-z0-9_]*)\s*(?=[{[])/g)].map((m) => m[1]);
  for (const [, pattern] of expr.matchAll(/__name__=~"([^"]+)"/g)) {
    const alternation = /^(.*)\(([^()]+)\)(.*)$/.exec(pattern);
    const expanded = alternation
      ? alternation[2].split('|').map((part) => `${alternation[1]}${part}${alternation[3]}`)
      : [pattern];
    names.push(...expanded);
  }
  return [...new Set(names.map((name) => name.replace(/_(bucket|sum|count)$/, '')))];
}
