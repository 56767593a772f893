import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

import { parse, parseAllDocuments } from 'yaml';

import {
  buildToTemporaryDir,
  entryPoints,
  helmBinary,
  readRepoFile,
  ROOT,
  variablesOf,
} from './ops-files';

/**
 * The Helm chart (docker/helm/sluice): helm lint and helm template pass, and every rendered
 * manifest validates against the Kubernetes schemas offline (kubernetes-models; KEDA's
 * ScaledObject and the Prometheus Operator's ServiceMonitor through their CRD models).
 */

const CHART = 'docker/helm/sluice';
const APPS = ['ingest', 'admin', 'router', 'dispatcher'] as const;

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

function helm(args: string[]): string {
  return execFileSync(helmBinary(), args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
}

function render(valuesFile: string, extra: string[] = []): Manifest[] {
  const text = helm(['template', 'sluice', CHART, '-f', `${CHART}/ci/${valuesFile}`, ...extra]);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);
}

/**
 * Validates manifests with the kubernetes-models classes in a child Node process (the
 * packages are ES modules, which Jest's CommonJS runtime does not load). Answers one error
 * message per invalid manifest.
 */
function validate(manifests: Manifest[]): string[] {
  const script = `
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const errors = [];
    for (const doc of JSON.parse(input)) {
      const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
      const module =
        group === 'keda.sh' ? '@kubernetes-models/keda/keda.sh/' + version + '/' + doc.kind
        : group === 'monitoring.coreos.com' ? '@kubernetes-models/prometheus-operator/monitoring.coreos.com/' + version + '/' + doc.kind
        : 'kubernetes-models/' + (group ? group + '/' : '') + version + '/' + doc.kind;
      try {
        const Model = (await import(module))[doc.kind];
        new Model(doc).validate();
      } catch (error) {
        errors.push(doc.kind + ' ' + doc.metadata.name + ': ' + error.message);
      }
    }
    process.stdout.write(JSON.stringify(errors));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: JSON.stringify(manifests),
    encoding: 'utf8',
  });
  return JSON.parse(out) as string[];
}

function byKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

function deployment(manifests: Manifest[], app: string): Manifest {
  const found = byKind(manifests, 'Deployment').find((m) => m.metadata.name === `sluice-${app}`);
  if (!found) throw new Error(`no Deployment for ${app}`);
  return found;
}

function env(manifest: Manifest): Record<string, any> {
  const container = manifest.spec.template.spec.containers[0];
  return Object.fromEntries(
    (container.env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [
      e.name,
      e.value ?? e.valueFrom,
    ]),
  );
}

describe('Helm chart docker/helm/sluice', () => {
  let minimal: Manifest[];
  let full: Manifest[];

  beforeAll(() => {
    minimal = render('minimal-values.yaml');
    full = render('all-features-values.yaml');
  });

  it('passes helm lint with the defaults, the least a user sets, and every feature on', () => {
    for (const args of [
      [],
      ['-f', `${CHART}/ci/minimal-values.yaml`],
      ['-f', `${CHART}/ci/all-features-values.yaml`],
    ]) {
      expect(helm(['lint', '--strict', CHART, ...args])).toContain('0 chart(s) failed');
    }
  });

  it('renders manifests that validate against the Kubernetes schemas', () => {
    expect(validate(minimal)).toEqual([]);
    expect(validate(full)).toEqual([]);
    const kinds = (manifests: Manifest[]) => [...new Set(manifests.map((m) => m.kind))].sort();
    expect(kinds(minimal)).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'Job',
      'PodDisruptionBudget',
      'Secret',
      'Service',
      'ServiceAccount',
    ]);
    expect(kinds(full)).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'Job',
      'PodDisruptionBudget',
      'ScaledObject',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
  });

  it('catches an invalid manifest (the validation is not a no-op)', () => {
    const broken = structuredClone(deployment(minimal, 'router'));
    broken.spec.replicas = 'two';
    expect(validate([broken])).toEqual([
      expect.stringContaining('data/spec/replicas must be integer'),
    ]);
  });

  it('runs every app with probes, resources, a hardened security context and a PDB', () => {
    for (const app of APPS) {
      const pod = deployment(minimal, app).spec.template.spec;
      const container = pod.containers[0];
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(container.livenessProbe.httpGet.path).toBe('/health/live');
      expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
      expect(container.resources.requests).toHaveProperty('cpu');
      expect(container.resources.limits).toHaveProperty('memory');
      expect(container.args).toEqual([`dist/apps/${app}/src/main.js`]);
      expect(
        byKind(minimal, 'PodDisruptionBudget').some((p) => p.metadata.name === `sluice-${app}`),
      ).toBe(true);
    }
  });

  it('migrates in a pre-install/pre-upgrade Job, after the created Secret exists', () => {
    const [job] = byKind(minimal, 'Job');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].args).toEqual(['dist/apps/admin/src/migrate.js']);
    const [secret] = byKind(minimal, 'Secret');
    expect(secret.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(secret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
  });

  it('reads secrets from a Secret: created (generated token and key) or existing', () => {
    const [secret] = byKind(minimal, 'Secret');
    const decoded = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
    expect(decoded('ADMIN_TOKENS')).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(Buffer.from(decoded('SECRETS_ENCRYPTION_KEY'), 'base64')).toHaveLength(32);
    expect(decoded('DATABASE_URL')).toMatch(/^postgres:\/\//);
    expect(env(deployment(minimal, 'admin')).ADMIN_TOKENS).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'ADMIN_TOKENS' },
    });
    expect(env(deployment(full, 'dispatcher')).SECRETS_ENCRYPTION_KEY).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'SECRETS_ENCRYPTION_KEY' },
    });
    // Only the apps that need a secret get it.
    expect(env(deployment(minimal, 'dispatcher'))).not.toHaveProperty('ADMIN_TOKENS');
    expect(env(deployment(minimal, 'router'))).not.toHaveProperty('SECRETS_ENCRYPTION_KEY');
  });

  it('has the SSRF allow-list as a visible value, empty by default', () => {
    expect(parse(readRepoFile(`${CHART}/values.yaml`)).dispatcher.allowedCidrs).toBe('');
    expect(env(deployment(minimal, 'dispatcher')).DISPATCHER_ALLOWED_CIDRS).toBe('');
    expect(env(deployment(full, 'dispatcher')).DISPATCHER_ALLOWED_CIDRS).toBe('10.20.0.0/16');
  });

  it('scales ingest on CPU, and router and dispatcher on their main topic lag with KEDA', () => {
    const [hpa] = byKind(minimal, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef.name).toBe('sluice-ingest');
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    const triggers = Object.fromEntries(
      byKind(full, 'ScaledObject').map((s) => [s.spec.scaleTargetRef.name, s.spec.triggers[0]]),
    );
    expect(triggers['sluice-router'].metadata).toMatchObject({
      consumerGroup: 'prod.sluice-router',
      topic: 'prod.sluice.calls.v1',
      bootstrapServers: 'kafka:9092',
    });
    expect(triggers['sluice-dispatcher'].metadata).toMatchObject({
      consumerGroup: 'prod.sluice-dispatcher',
      topic: 'prod.sluice.deliveries.v1',
    });
    // Replicas are left to the autoscalers when they are on.
    expect(deployment(full, 'router').spec).not.toHaveProperty('replicas');
    expect(deployment(minimal, 'router').spec.replicas).toBe(2);
  });

  it('matches the consumer groups the apps use (prefix + sluice-router / sluice-dispatcher)', () => {
    const sources = (app: string) =>
      ['main.ts', 'app.module.ts'].map((f) => readRepoFile(`apps/${app}/src/${f}`)).join('\n');
    expect(sources('router')).toMatch(/\$\{[\w.]*opicPrefix\}sluice-router`/);
    expect(sources('dispatcher')).toMatch(/\$\{[\w.]*(topicPrefix|prefix)\}sluice-dispatcher`/);
  });

  it('sets only variables the apps read, and at least those the compose file sets', () => {
    const compose = parse(readRepoFile('docker/compose.yml'), { merge: true }) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    for (const app of APPS) {
      const names = Object.keys(env(deployment(full, app)));
      const known = variablesOf(app);
      expect({ app, unknown: names.filter((n) => !known.has(n)) }).toEqual({ app, unknown: [] });
      const missing = Object.keys(compose.services[app].environment).filter(
        (n) => !names.includes(n),
      );
      expect({ app, missing }).toEqual({ app, missing: [] });
    }
  });

  it('names only entry points that the build produces', () => {
    const outDir = buildToTemporaryDir();
    try {
      const named = entryPoints(JSON.stringify([...minimal, ...full]));
      expect(named.sort()).toEqual([
        'dist/apps/admin/src/main.js',
        'dist/apps/admin/src/migrate.js',
        'dist/apps/dispatcher/src/main.js',
        'dist/apps/ingest/src/main.js',
        'dist/apps/router/src/main.js',
      ]);
      for (const path of named) expect(existsSync(join(outDir, relative('dist', path)))).toBe(true);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });
});
