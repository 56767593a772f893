import { execFileSync } from 'node:child_process';

import { parseAllDocuments } from 'yaml';

import { helmBinary, ROOT, variablesOf } from './ops-files';

/**
 * The chart's kafkaSecurity values: every app gets the same KAFKA_SSL and KAFKA_SASL variables
 * (names the apps really read), KEDA's Kafka scaler the same settings through a
 * TriggerAuthentication on the same Secrets, and nothing changes while they are unset.
 */

const CHART = 'docker/helm/sluice';
const BASE = ['--set', 'kafka.brokers=kafka:9093', '--set', 'secrets.existingSecret=sluice'];

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string } };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec?: any;
}

function helm(args: string[]): string {
  return execFileSync(helmBinary(), args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
}

function render(sets: string[]): Manifest[] {
  const text = helm(['template', 'sluice', CHART, ...BASE, ...sets.flatMap((s) => ['--set', s])]);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);
}

function deployments(manifests: Manifest[]): Manifest[] {
  return manifests.filter((m) => m.kind === 'Deployment');
}

function envOf(deployment: Manifest): EnvVar[] {
  return deployment.spec.template.spec.containers[0].env as EnvVar[];
}

const SECURED = [
  'kafkaSecurity.tls.enabled=true',
  'kafkaSecurity.tls.secretName=kafka-tls',
  'kafkaSecurity.tls.clientCertificate=true',
  'kafkaSecurity.sasl.mechanism=scram-sha-512',
  'kafkaSecurity.sasl.secretName=kafka-user',
  'router.keda.enabled=true',
  'dispatcher.keda.enabled=true',
];

describe('Helm chart: kafkaSecurity', () => {
  it('adds nothing while unset', () => {
    const manifests = render(['router.keda.enabled=true']);
    for (const deployment of deployments(manifests)) {
      expect(envOf(deployment).filter((e) => /^KAFKA_S(SL|ASL)/.test(e.name))).toEqual([]);
    }
    expect(manifests.some((m) => m.kind === 'TriggerAuthentication')).toBe(false);
    const scaled = manifests.find((m) => m.kind === 'ScaledObject')!;
    expect(scaled.spec.triggers[0].authenticationRef).toBeUndefined();
  });

  it('gives every app TLS with the mounted CA and client certificate, and SASL from the Secret', () => {
    const manifests = render(SECURED);
    expect(deployments(manifests)).toHaveLength(4);
    for (const deployment of deployments(manifests)) {
      const env = envOf(deployment);
      const app = deployment.metadata.name.replace(/^sluice-/, '');
      const byName = new Map(env.map((e) => [e.name, e]));
      expect(byName.get('KAFKA_SSL')?.value).toBe('true');
      expect(byName.get('KAFKA_SSL_CA_FILE')?.value).toBe('/etc/sluice/kafka-tls/ca.crt');
      expect(byName.get('KAFKA_SSL_CERT_FILE')?.value).toBe('/etc/sluice/kafka-tls/tls.crt');
      expect(byName.get('KAFKA_SSL_KEY_FILE')?.value).toBe('/etc/sluice/kafka-tls/tls.key');
      expect(byName.get('KAFKA_SASL_MECHANISM')?.value).toBe('scram-sha-512');
      expect(byName.get('KAFKA_SASL_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
        name: 'kafka-user',
        key: 'KAFKA_SASL_PASSWORD',
      });
      // Only variables the app declares (an unknown one would be ignored silently).
      const known = variablesOf(app);
      for (const e of env.filter((v) => v.name.startsWith('KAFKA_'))) {
        expect(known).toContain(e.name);
      }
      const pod = deployment.spec.template.spec;
      expect(pod.volumes).toContainEqual({
        name: 'kafka-tls',
        secret: { secretName: 'kafka-tls' },
      });
      expect(pod.containers[0].volumeMounts).toContainEqual({
        name: 'kafka-tls',
        mountPath: '/etc/sluice/kafka-tls',
        readOnly: true,
      });
    }
  });

  it("gives KEDA's Kafka scaler the same settings through a TriggerAuthentication", () => {
    const manifests = render(SECURED);
    const auth = manifests.find((m) => m.kind === 'TriggerAuthentication')!;
    expect(auth.spec.secretTargetRef).toEqual([
      { parameter: 'username', name: 'kafka-user', key: 'KAFKA_SASL_USERNAME' },
      { parameter: 'password', name: 'kafka-user', key: 'KAFKA_SASL_PASSWORD' },
      { parameter: 'ca', name: 'kafka-tls', key: 'ca.crt' },
      { parameter: 'cert', name: 'kafka-tls', key: 'tls.crt' },
      { parameter: 'key', name: 'kafka-tls', key: 'tls.key' },
    ]);
    const triggers = manifests
      .filter((m) => m.kind === 'ScaledObject')
      .map(
        (m) =>
          (m.spec as { triggers: { metadata: object; authenticationRef?: object }[] }).triggers[0],
      );
    expect(triggers).toHaveLength(2);
    for (const trigger of triggers) {
      expect(trigger.metadata).toMatchObject({ tls: 'enable', sasl: 'scram_sha512' });
      expect(trigger.authenticationRef).toEqual({ name: auth.metadata.name });
    }
    const own = render([...SECURED, 'keda.authenticationRef=mine']);
    expect(own.some((m) => m.kind === 'TriggerAuthentication')).toBe(false);
    expect(own.find((m) => m.kind === 'ScaledObject')!.spec.triggers[0].authenticationRef).toEqual({
      name: 'mine',
    });
  });

  it('passes an OAUTHBEARER token file and refuses what cannot work', () => {
    const oauth = render([
      'kafkaSecurity.sasl.mechanism=oauthbearer',
      'kafkaSecurity.sasl.tokenFile=/var/run/secrets/kafka/token',
    ]);
    const env = envOf(deployments(oauth)[0]);
    expect(env).toContainEqual({
      name: 'KAFKA_SASL_OAUTHBEARER_TOKEN_FILE',
      value: '/var/run/secrets/kafka/token',
    });
    const fails = (args: string[]) => {
      try {
        helm(['template', 'sluice', CHART, ...args]);
      } catch (error) {
        return String((error as { stderr: string }).stderr);
      }
      throw new Error('rendered');
    };
    expect(fails([...BASE, '--set', 'kafkaSecurity.sasl.mechanism=oauthbearer'])).toContain(
      'kafkaSecurity.sasl.tokenFile is required',
    );
    expect(fails([...BASE, '--set', 'kafkaSecurity.sasl.mechanism=gssapi'])).toContain(
      'kafkaSecurity/sasl/mechanism',
    );
    const noSecret = [
      '--set',
      'kafka.brokers=kafka:9093',
      '--set',
      'secrets.databaseUrl=postgres://u:p@db:5432/sluice',
      '--set',
      'secrets.adminTokens=0123456789abcdef0123456789abcdef',
      '--set',
      `secrets.encryptionKey=${Buffer.alloc(32, 1).toString('base64')}`,
      '--set',
      'kafkaSecurity.sasl.mechanism=plain',
    ];
    expect(fails(noSecret)).toContain('KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD');
  });

  it('gives the password as a mounted file with passwordAsFile, and never the variable too', () => {
    const manifests = render([...SECURED, 'kafkaSecurity.sasl.passwordAsFile=true']);
    for (const deployment of deployments(manifests)) {
      const names = envOf(deployment).map((e) => e.name);
      // The apps refuse to start with both (a password and a password file).
      expect(names).not.toContain('KAFKA_SASL_PASSWORD');
      expect(envOf(deployment)).toContainEqual({
        name: 'KAFKA_SASL_PASSWORD_FILE',
        value: '/etc/sluice/kafka-sasl/password',
      });
      expect(names).toContain('KAFKA_SASL_USERNAME');
      const pod = deployment.spec.template.spec;
      expect(pod.volumes).toContainEqual({
        name: 'kafka-sasl',
        secret: {
          secretName: 'kafka-user',
          items: [{ key: 'KAFKA_SASL_PASSWORD', path: 'password' }],
        },
      });
      // A directory mount (no subPath), so a rotated Secret reaches the file.
      expect(pod.containers[0].volumeMounts).toContainEqual({
        name: 'kafka-sasl',
        mountPath: '/etc/sluice/kafka-sasl',
        readOnly: true,
      });
    }
    // KEDA still reads the password from the Secret's key.
    const auth = manifests.find((m) => m.kind === 'TriggerAuthentication')!;
    expect(auth.spec.secretTargetRef).toContainEqual({
      parameter: 'password',
      name: 'kafka-user',
      key: 'KAFKA_SASL_PASSWORD',
    });
  });

  it('refuses OAUTHBEARER with a KEDA scaler unless keda.authenticationRef names one', () => {
    const oauth = [
      'kafkaSecurity.sasl.mechanism=oauthbearer',
      'kafkaSecurity.sasl.tokenFile=/var/run/secrets/kafka/token',
      'dispatcher.keda.enabled=true',
    ];
    const args = ['template', 'sluice', CHART, ...BASE, ...oauth.flatMap((s) => ['--set', s])];
    expect(() => helm(args)).toThrow(/oauthbearer with router.keda or dispatcher.keda/);
    const withRef = render([...oauth, 'keda.authenticationRef=kafka-oauth']);
    expect(withRef.some((m) => m.kind === 'TriggerAuthentication')).toBe(false);
    const trigger = withRef.find((m) => m.kind === 'ScaledObject')!.spec.triggers[0];
    expect(trigger.authenticationRef).toEqual({ name: 'kafka-oauth' });
  });

  it('lints clean with --strict when secured', () => {
    expect(() =>
      helm(['lint', '--strict', CHART, ...BASE, ...SECURED.flatMap((s) => ['--set', s])]),
    ).not.toThrow();
  });
});
