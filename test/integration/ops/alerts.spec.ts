import { execFileSync } from 'node:child_process';

import { parse } from 'yaml';

import { alertMetricNames, readRepoFile, ROOT } from './ops-files';

/**
 * The alerting rules (docker/helm/sluice/files/alerts.yml, the one copy that compose's
 * Prometheus and the chart's PrometheusRule share): promtool accepts them, their unit tests
 * pass, every alert has a test that expects it to fire, and they name only metrics the apps
 * export. test/e2e/ops/prometheus.spec.ts evaluates them against the running apps.
 */

const RULES = 'docker/helm/sluice/files/alerts.yml';
const TESTS = 'docker/prometheus/alerts.test.yml';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const rules = (parse(readRepoFile(RULES)) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);

/** promtool's output; a failure throws with its output as the message. */
function promtool(args: string[]): string {
  try {
    return execFileSync('promtool', args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`, {
      cause: error,
    });
  }
}

describe('Alerting rules', () => {
  it('pass promtool check rules', () => {
    expect(promtool(['check', 'rules', RULES])).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('pass their unit tests (promtool test rules)', () => {
    expect(promtool(['test', 'rules', TESTS])).toContain('SUCCESS');
  });

  it('are all tested firing, and the tests read the shipped file', () => {
    const tests = parse(readRepoFile(TESTS)) as { rule_files: string[]; tests: RuleTest[] };
    expect(tests.rule_files).toEqual(['../helm/sluice/files/alerts.yml']);
    const fired = new Set(
      tests.tests
        .flatMap((t) => t.alert_rule_test ?? [])
        .filter((t) => t.exp_alerts.length > 0)
        .map((t) => t.alertname),
    );
    expect(rules.map((r) => r.alert).filter((name) => !fired.has(name))).toEqual([]);
  });

  it('cover what operators need to hear about, each with a severity and a summary', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'SluiceConsumerLagGrowing',
      'SluiceDeadLetters',
      'SluiceDestinationBreakerOpen',
      'SluiceIngest5xx',
      'SluiceNotReady',
      'SluiceProduceLatencyHigh',
      'SluiceTargetDown',
      'SluiceWebhook5xxRatioHigh',
    ]);
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels.severity }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(warning|critical)$/),
      });
      expect(rule.annotations.summary).toBeTruthy();
      expect(rule.annotations.description).toBeTruthy();
    }
  });

  it('name only metrics that the apps export', () => {
    const code = execFileSync(
      'grep',
      ['-rhoE', '--exclude=*.spec.ts', "'sluice_[a-z_]+'", 'apps', 'libs'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const exported = new Set(code.match(/sluice_[a-z_]+/g));
    const named = rules.flatMap((rule) => alertMetricNames(rule.expr));
    expect(named.length).toBeGreaterThanOrEqual(rules.length);
    const unknown = named.filter((name) => name !== 'up' && !exported.has(name));
    expect(unknown).toEqual([]);
  });

  it('are loaded by compose Prometheus from the same file', () => {
    const prometheus = parse(readRepoFile('docker/prometheus/prometheus.yml')) as {
      rule_files: string[];
    };
    expect(prometheus.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    const compose = parse(readRepoFile('docker/compose.yml'), { merge: true }) as {
      services: Record<string, { volumes: string[] }>;
    };
    expect(compose.services.prometheus.volumes).toContain(
      './helm/sluice/files/alerts.yml:/etc/prometheus/alerts.yml:ro',
    );
  });
});
