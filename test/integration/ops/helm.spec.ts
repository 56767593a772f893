import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { parse, parseAllDocuments } from 'yaml';

import { loadAdminConfig } from '../../../apps/admin/src/config';

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

/** The error `helm template` stops with (the test fails if it renders). */
function renderError(args: string[]): string {
  try {
    helm(['template', 'sluice', CHART, ...args]);
  } catch (error) {
    return String((error as { stderr: string }).stderr);
  }
  throw new Error(`helm template ${args.join(' ')} rendered`);
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

/** The annotations of a Deployment's pod template. */
function podTemplateAnnotations(manifest: Manifest): Record<string, string> {
  return (manifest.spec.template.metadata.annotations ?? {}) as Record<string, string>;
}

/** The pod spec of a Deployment or Job. */
/** The ingest HPA's least replicas. */
function hpaMin(manifests: Manifest[]): number {
  return (byKind(manifests, 'HorizontalPodAutoscaler')[0].spec as { minReplicas: number })
    .minReplicas;
}

function podOf(manifest: Manifest): any {
  return manifest.spec.template.spec;
}

function env(manifest: Manifest): Record<string, any> {
  const container = podOf(manifest).containers[0];
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
      ['-f', `${CHART}/ci/production-values.yaml`],
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
      'Service',
      'ServiceAccount',
    ]);
    expect(kinds(full)).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'Ingress',
      'Job',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'PrometheusRule',
      'ScaledObject',
      'Secret',
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

  it('runs the production values with replication factor 3, spread replicas, PDBs and a surge-only rollout', () => {
    const production = render('production-values.yaml');
    expect(validate(production)).toEqual([]);
    for (const app of APPS) {
      const apps = deployment(production, app);
      const pod = podOf(apps);
      const env = pod.containers[0].env as { name: string; value?: string }[];
      expect(env).toContainEqual({ name: 'KAFKA_REPLICATION_FACTOR', value: '3' });
      // No pod goes before its replacement is ready, one new pod at a time.
      expect(apps.spec.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
      });
      const component = { 'app.kubernetes.io/component': app };
      const constraints = pod.topologySpreadConstraints as { topologyKey: string }[];
      expect(constraints.map((c) => c.topologyKey)).toEqual([
        'topology.kubernetes.io/zone',
        'kubernetes.io/hostname',
      ]);
      for (const constraint of pod.topologySpreadConstraints) {
        expect(constraint.labelSelector.matchLabels).toMatchObject(component);
      }
      const pdb = byKind(production, 'PodDisruptionBudget').find(
        (p) => p.metadata.name === `sluice-${app}`,
      );
      expect(pdb?.spec).toMatchObject({ maxUnavailable: 1, selector: { matchLabels: component } });
      // Two replicas at least, so a PDB of one pod never blocks a node's drain for good.
      const replicas = app === 'ingest' ? hpaMin(production) : apps.spec.replicas;
      expect(replicas).toBeGreaterThanOrEqual(2);
    }
  });

  it('migrates in a pre-install/pre-upgrade Job, after the created Secret exists', () => {
    const [job] = byKind(full, 'Job');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].args).toEqual(['dist/apps/admin/src/migrate.js']);
    // A migration encrypts stored static header values with the apps' key.
    expect(env(job).SECRETS_ENCRYPTION_KEY).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'SECRETS_ENCRYPTION_KEY' },
    });
    const [secret] = byKind(full, 'Secret');
    expect(secret.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(secret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
  });

  it('reads secrets from a Secret: created from the values, or existing', () => {
    const [secret] = byKind(full, 'Secret');
    const values = parse(readRepoFile(`${CHART}/ci/all-features-values.yaml`)).secrets;
    const decoded = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
    expect(decoded('DATABASE_URL')).toBe(values.databaseUrl);
    expect(decoded('ADMIN_TOKENS')).toBe(values.adminTokens);
    expect(decoded('SECRETS_ENCRYPTION_KEY')).toBe(values.encryptionKey);
    expect(env(deployment(full, 'admin')).ADMIN_TOKENS).toEqual({
      secretKeyRef: { name: 'sluice-secrets', key: 'ADMIN_TOKENS' },
    });
    // An existing Secret: nothing created, every reference names it.
    expect(byKind(minimal, 'Secret')).toEqual([]);
    expect(env(deployment(minimal, 'dispatcher')).SECRETS_ENCRYPTION_KEY).toEqual({
      secretKeyRef: { name: 'sluice', key: 'SECRETS_ENCRYPTION_KEY' },
    });
    expect(env(byKind(minimal, 'Job')[0]).DATABASE_URL).toEqual({
      secretKeyRef: { name: 'sluice', key: 'DATABASE_URL' },
    });
    // Only the apps that need a secret get it.
    expect(env(deployment(minimal, 'dispatcher'))).not.toHaveProperty('ADMIN_TOKENS');
    expect(env(deployment(minimal, 'router'))).not.toHaveProperty('SECRETS_ENCRYPTION_KEY');
  });

  it('renders the same Secret every time: nothing is generated', () => {
    const again = render('all-features-values.yaml');
    expect(byKind(again, 'Secret')).toEqual(byKind(full, 'Secret'));
    expect(byKind(again, 'Secret')).toHaveLength(1);
    expect(JSON.stringify(again)).toBe(JSON.stringify(full));
  });

  it('fails without an existing Secret or the values, with the command that creates one', () => {
    const none = renderError(['--set', 'kafka.brokers=kafka:9092']);
    expect(none).toContain(
      'secrets.databaseUrl, secrets.adminTokens, secrets.encryptionKey not set, and no secrets.existingSecret',
    );
    const command = /kubectl create secret generic sluice .*/.exec(none)?.[0];
    expect(command).toContain(`--from-literal=ADMIN_TOKENS="$(openssl rand -hex 24)"`);
    expect(command).toContain(`--from-literal=SECRETS_ENCRYPTION_KEY="$(openssl rand -base64 32)"`);
    expect(none).toContain('then set secrets.existingSecret=sluice');
    // The same command in the quick start.
    expect(readRepoFile('docs/kubernetes.md')).toContain('kubectl create secret generic sluice');
    // Some values given: the message names the missing ones only.
    const partial = renderError([
      '--set',
      'kafka.brokers=kafka:9092,secrets.databaseUrl=postgres://u:p@db:5432/sluice',
    ]);
    expect(partial).toContain('secrets.adminTokens, secrets.encryptionKey not set');
  });

  it('documents a command whose values the apps accept', () => {
    const openssl = (args: string[]) =>
      execFileSync('openssl', ['rand', ...args], { encoding: 'utf8' }).trim();
    const adminTokens = openssl(['-hex', '24']);
    const encryptionKey = openssl(['-base64', '32']);
    const config = loadAdminConfig({
      KAFKA_BROKERS: 'kafka:9092',
      DATABASE_URL: 'postgres://u:p@db:5432/sluice',
      ADMIN_TOKENS: adminTokens,
      SECRETS_ENCRYPTION_KEY: encryptionKey,
    });
    expect(config.admin.tokens).toEqual([adminTokens]);
    expect(config.admin.secretsKey).toBe(encryptionKey);
    // And the chart's schema takes the same values.
    expect(() =>
      helm([
        'template',
        'sluice',
        CHART,
        '--set',
        `kafka.brokers=kafka:9092,secrets.databaseUrl=postgres://u:p@db:5432/sluice`,
        '--set-string',
        `secrets.adminTokens=${adminTokens},secrets.encryptionKey=${encryptionKey}`,
      ]),
    ).not.toThrow();
  });

  it("rolls the pods when the chart's Secret changes (not for an existing Secret)", () => {
    const checksums = (manifests: Manifest[]): (string | undefined)[] =>
      APPS.map((app) => podTemplateAnnotations(deployment(manifests, app))['checksum/secrets']);
    const before = checksums(full);
    expect(before[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(before).size).toBe(1);
    // The pod annotations of the values stay beside it.
    expect(podTemplateAnnotations(deployment(full, 'router')).team).toBe('events');
    const other = 'b3RoZXIta2V5LTMyLWJ5dGVzLWxvbmctLS0tLS0tLS0=';
    const after = checksums(
      render('all-features-values.yaml', ['--set-string', `secrets.encryptionKey=${other}`]),
    );
    expect(after[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(after[0]).not.toBe(before[0]);
    expect(checksums(minimal)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("adds extraEnv, envFrom and volumes: the top-level ones to every app and the migration, then each app's", () => {
    const names = (list: { name: string }[] | undefined) => (list ?? []).map((e) => e.name);
    for (const app of APPS) {
      const pod = podOf(deployment(full, app));
      const container = pod.containers[0];
      const own = app === 'dispatcher';
      expect(names(container.env).slice(own ? -2 : -1)).toEqual(
        own ? ['NODE_EXTRA_CA_CERTS', 'DISPATCHER_EXTRA_CA_FILE'] : ['NODE_EXTRA_CA_CERTS'],
      );
      expect(container.envFrom).toEqual([
        { secretRef: { name: 'sluice-extra' } },
        ...(own ? [{ configMapRef: { name: 'dispatcher-extra' }, prefix: '' }] : []),
      ]);
      expect(names(pod.volumes)).toEqual(own ? ['tmp', 'ca', 'webhook-ca'] : ['tmp', 'ca']);
      expect((container.volumeMounts as { mountPath: string }[]).map((m) => m.mountPath)).toEqual(
        own ? ['/tmp', '/etc/sluice/ca', '/etc/sluice/webhook-ca'] : ['/tmp', '/etc/sluice/ca'],
      );
    }
    // The dispatcher's CA file is in a mounted volume.
    expect(env(deployment(full, 'dispatcher')).DISPATCHER_EXTRA_CA_FILE).toMatch(
      /^\/etc\/sluice\/webhook-ca\//,
    );
    const job = podOf(byKind(full, 'Job')[0]);
    expect(names(job.containers[0].env)).toEqual([
      'DATABASE_URL',
      'SECRETS_ENCRYPTION_KEY',
      'NODE_EXTRA_CA_CERTS',
    ]);
    expect(job.containers[0].envFrom).toEqual([{ secretRef: { name: 'sluice-extra' } }]);
    expect(names(job.volumes)).toEqual(['ca']);
    expect(names(job.containers[0].volumeMounts)).toEqual(['ca']);
    // None of it by default.
    const plain = podOf(deployment(minimal, 'dispatcher'));
    expect(plain.containers[0]).not.toHaveProperty('envFrom');
    expect(names(plain.volumes)).toEqual(['tmp']);
  });

  it('schedules each app with its own affinity and tolerations, else the top-level ones, and spreads it', () => {
    const pod = (app: string): any => podOf(deployment(full, app));
    const everywhere = [
      { key: 'dedicated', operator: 'Equal', value: 'sluice', effect: 'NoSchedule' },
    ];
    expect(pod('ingest').tolerations).toEqual(everywhere);
    expect(pod('admin').tolerations).toEqual([
      { key: 'control-plane', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(podOf(byKind(full, 'Job')[0]).tolerations).toEqual(everywhere);
    expect(pod('router').affinity.podAntiAffinity).toBeDefined();
    expect(pod('ingest')).not.toHaveProperty('affinity');
    // A constraint without a labelSelector spreads the app's own pods; a given one is kept.
    expect(pod('ingest').topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'sluice',
            'app.kubernetes.io/instance': 'sluice',
            'app.kubernetes.io/component': 'ingest',
          },
        },
      },
    ]);
    expect(pod('dispatcher').topologySpreadConstraints[0].labelSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/component': 'dispatcher' },
    });
    expect(pod('router')).not.toHaveProperty('topologySpreadConstraints');
    expect(podOf(deployment(minimal, 'admin'))).not.toHaveProperty('tolerations');
  });

  it('routes only the listed paths through the optional Ingresses, none by default', () => {
    expect(byKind(minimal, 'Ingress')).toEqual([]);
    const defaults = parse(readRepoFile(`${CHART}/values.yaml`));
    expect(defaults.ingest.ingress.enabled).toBe(false);
    expect(defaults.admin.ingress.enabled).toBe(false);
    const [ingest, admin] = byKind(full, 'Ingress');
    expect(ingest.metadata.name).toBe('sluice-ingest');
    expect(ingest.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/proxy-body-size': '1m',
    });
    expect(ingest.spec.ingressClassName).toBe('nginx');
    expect(ingest.spec.tls).toEqual([{ hosts: ['track.example.com'], secretName: 'track-tls' }]);
    const backend = { service: { name: 'sluice-ingest', port: { name: 'http' } } };
    expect(ingest.spec.rules).toEqual([
      {
        host: 'track.example.com',
        http: { paths: [{ path: '/v1', pathType: 'Prefix', backend }] },
      },
    ]);
    expect(admin.metadata.name).toBe('sluice-admin');
    expect(admin.spec).not.toHaveProperty('ingressClassName');
    expect((admin.spec.rules[0].http.paths as { path: string }[]).map((p) => p.path)).toEqual([
      '/admin',
      '/console',
    ]);
    // Without a host, any host.
    const anyHost = render('minimal-values.yaml', ['--set', 'ingest.ingress.enabled=true']);
    expect(byKind(anyHost, 'Ingress')[0].spec.rules[0]).not.toHaveProperty('host');
  });

  it('admits traffic to each app only from the listed peers when NetworkPolicies are on', () => {
    expect(byKind(minimal, 'NetworkPolicy')).toEqual([]);
    const policy = (manifests: Manifest[], app: string): any =>
      byKind(manifests, 'NetworkPolicy').find((p) => p.metadata.name === `sluice-${app}`)?.spec;
    const port = [{ port: 'http', protocol: 'TCP' }];
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const ingressNginx = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
    };
    for (const app of APPS) {
      expect(policy(full, app)).toMatchObject({
        podSelector: { matchLabels: { 'app.kubernetes.io/component': app } },
        policyTypes: ['Ingress'],
      });
    }
    // The tracking API from anyone unless networkPolicy.ingestFrom lists peers.
    expect(policy(full, 'ingest').ingress).toEqual([{ ports: port }]);
    expect(policy(full, 'admin').ingress).toEqual([
      { ports: port, from: [ingressNginx, monitoring] },
    ]);
    expect(policy(full, 'router').ingress).toEqual([{ ports: port, from: [monitoring] }]);
    expect(policy(full, 'dispatcher').ingress).toEqual([{ ports: port, from: [monitoring] }]);
    // No peer listed: nothing may connect, but the tracking API.
    const bare = render('minimal-values.yaml', ['--set', 'networkPolicy.enabled=true']);
    expect(policy(bare, 'ingest')?.ingress).toEqual([{ ports: port }]);
    for (const app of ['admin', 'router', 'dispatcher'])
      expect(policy(bare, app)?.ingress).toEqual([]);
    const closed = render('all-features-values.yaml', [
      '--set',
      'networkPolicy.ingestFrom[0].ipBlock.cidr=10.0.0.0/8',
    ]);
    expect(policy(closed, 'ingest')?.ingress).toEqual([
      { ports: port, from: [{ ipBlock: { cidr: '10.0.0.0/8' } }, monitoring] },
    ]);
  });

  it('renders the alert rules file, unchanged, as the optional PrometheusRule', () => {
    expect(byKind(minimal, 'PrometheusRule')).toEqual([]);
    const [rule] = byKind(full, 'PrometheusRule');
    expect(rule.metadata).toMatchObject({ name: 'sluice', labels: { release: 'prometheus' } });
    expect(rule.spec).toEqual(parse(readRepoFile(`${CHART}/files/alerts.yml`)));
    expect(rule.spec.groups[0].rules.length).toBeGreaterThanOrEqual(6);
  });

  it('refuses replica bounds that cannot work', () => {
    const base = ['-f', `${CHART}/ci/all-features-values.yaml`, '--set'];
    expect(
      renderError([...base, 'ingest.autoscaling.minReplicas=5,ingest.autoscaling.maxReplicas=3']),
    ).toContain('ingest.autoscaling.minReplicas (5) is above ingest.autoscaling.maxReplicas (3)');
    expect(
      renderError([...base, 'dispatcher.keda.minReplicaCount=4,dispatcher.keda.maxReplicaCount=2']),
    ).toContain('dispatcher.keda.minReplicaCount (4) is above dispatcher.keda.maxReplicaCount (2)');
    expect(renderError([...base, 'router.keda.maxReplicaCount=13'])).toContain(
      'router.keda.maxReplicaCount (13) is above kafka.topicPartitions (12)',
    );
    // More partitions admit more replicas; a scaler that is off is not checked.
    expect(
      render('all-features-values.yaml', [
        '--set',
        'kafka.topicPartitions=24,router.keda.maxReplicaCount=24',
      ]),
    ).not.toHaveLength(0);
    expect(
      render('minimal-values.yaml', ['--set', 'router.keda.maxReplicaCount=13']),
    ).not.toHaveLength(0);
    // What one value alone cannot be, values.schema.json refuses.
    expect(renderError([...base, 'router.keda.maxReplicaCount=20000'])).toContain(
      'maxReplicaCount',
    );
    expect(renderError([...base, 'ingest.autoscaling.minReplicas=0'])).toContain('minReplicas');
  });

  it('renders the quick start of docs/kubernetes.md as written', () => {
    const doc = readRepoFile('docs/kubernetes.md');
    const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-quick-start-'));
    try {
      const files = blocks.map((text, i) => {
        const file = join(dir, `values-${i}.yaml`);
        writeFileSync(file, text);
        return file;
      });
      // The install's values, then the admin Ingress and the webhook CA of the later blocks.
      const text = helm(['template', 'sluice', CHART, ...files.flatMap((f) => ['-f', f])]);
      const manifests = parseAllDocuments(text).map((d) => d.toJS() as Manifest);
      expect(validate(manifests)).toEqual([]);
      expect(byKind(manifests, 'Secret')).toEqual([]);
      for (const app of APPS) {
        const vars = env(deployment(manifests, app));
        expect(vars).toMatchObject({
          KAFKA_SSL: 'true',
          KAFKA_SSL_CA_FILE: '/etc/sluice/kafka-tls/ca.crt',
          KAFKA_SASL_MECHANISM: 'scram-sha-512',
          KAFKA_SASL_PASSWORD: { secretKeyRef: { name: 'kafka-sasl', key: 'KAFKA_SASL_PASSWORD' } },
        });
        const known = variablesOf(app);
        expect(Object.keys(vars).filter((name) => !known.has(name))).toEqual([]);
      }
      expect(byKind(manifests, 'Ingress').map((i) => i.metadata.name)).toEqual(['sluice-admin']);
      expect(env(deployment(manifests, 'dispatcher')).DISPATCHER_EXTRA_CA_FILE).toBe(
        '/etc/sluice/webhook-ca/ca.crt',
      );
      // The commands name the chart's Services and the Secret the values point at.
      expect(doc).toContain('svc/sluice-admin 8081:8081');
      expect(doc).toContain('svc/sluice-ingest 8080:8080');
      expect(doc).toContain('kubectl create secret generic sluice \\');
      expect(doc).toContain('kubectl create secret generic kafka-tls ');
      expect(doc).toContain('kubectl create secret generic kafka-sasl \\');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    // Each app declares its groups once; defineKafkaTopology puts the prefix in front.
    const topology = (app: string) => readRepoFile(`apps/${app}/src/kafka-topology.ts`);
    expect(topology('router')).toMatch(/group: 'sluice-router',/);
    expect(topology('dispatcher')).toMatch(/group: 'sluice-dispatcher',/);
  });

  it('sets only variables the apps read, and at least those the compose file sets', () => {
    const compose = parse(readRepoFile('docker/compose.yml'), { merge: true }) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    for (const app of APPS) {
      const names = Object.keys(env(deployment(full, app)));
      // Node's own variable (a CA bundle for every TLS connection) is the one extra allowed.
      const known = new Set([...variablesOf(app), 'NODE_EXTRA_CA_CERTS']);
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
