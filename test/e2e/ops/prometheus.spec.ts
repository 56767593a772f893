import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { parse } from 'yaml';

import { startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually, TEST_ADMIN_TOKEN } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';
import { alertMetricNames } from '../../integration/ops/ops-files';

/**
 * The real Prometheus server (Debian's `prometheus`) scrapes the four apps while traffic goes
 * through ingest, the router and the dispatcher to a local receiver, with the shipped alert
 * rules loaded; then every expression of the shipped Grafana dashboard must return data, the
 * rules must evaluate without error over the real series (the dead letter must fire its
 * alert), and `promtool check metrics` must find no problem in any app's /metrics.
 */

const ROOT = join(__dirname, '../../..');
const DASHBOARD = join(ROOT, 'docker/grafana/dashboards/sluice.json');
const ALERTS = join(ROOT, 'docker/helm/sluice/files/alerts.yml');
/** Stands in for Grafana's `$__rate_interval` (at least four scrape intervals of 1 s). */
const RATE_INTERVAL = '30s';
const APPS = ['ingest', 'admin', 'router', 'dispatcher'] as const;
/** The dashboard's variables, at their default (All): Grafana's `allValue`. */
const VARIABLES = { $namespace: '.*', $job: '.*' };

interface DashboardPanel {
  title?: string;
  targets?: { expr: string }[];
  panels?: DashboardPanel[];
}

/** Every query of the dashboard, with the panel it belongs to. */
function dashboardQueries(): { panel: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: DashboardPanel[] };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((panel) =>
    (panel.targets ?? []).map((t) => ({ panel: panel.title ?? '', expr: t.expr })),
  );
}

/** A dashboard expression with Grafana's variables as they are by default. */
function withVariables(expr: string): string {
  let out = expr.replaceAll('$__rate_interval', RATE_INTERVAL);
  for (const [name, value] of Object.entries(VARIABLES)) out = out.replaceAll(name, value);
  return out;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A Prometheus server of this test: its own port, storage and configuration. */
class PrometheusServer {
  private process?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'sluice-prometheus-'));
  url = '';

  async start(targets: string[]): Promise<this> {
    // Compose's job name (the alerts select on it), and the shipped rules file.
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - '${ALERTS}'`,
      'scrape_configs:',
      '  - job_name: sluice',
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n');
    writeFileSync(join(this.dir, 'prometheus.yml'), config);
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.process = spawn(
      'prometheus',
      [
        `--config.file=${join(this.dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(this.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    this.process.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await eventually(
      async () => {
        if (this.process?.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
        const ready = await fetch(`${this.url}/-/ready`).catch(() => undefined);
        return ready?.ok ? true : undefined;
      },
      30_000,
      'Prometheus to be ready',
    );
    return this;
  }

  /** The result vector of an instant query. */
  async query(expr: string): Promise<unknown[]> {
    return (await this.api(`query?query=${encodeURIComponent(expr)}`)) as unknown[];
  }

  /** The `data` of an API answer (`query?...`, `rules`, `alerts`), or its error thrown. */
  async api(path: string): Promise<any> {
    const response = await fetch(`${this.url}/api/v1/${path}`);
    const body = (await response.json()) as { status: string; error?: string; data: any };
    if (body.status !== 'success') throw new Error(`${path} failed: ${body.error}`);
    return path.startsWith('query') ? body.data.result : body.data;
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('Prometheus and the shipped Grafana dashboard', () => {
  const harness = new DispatcherHarness();
  const receiver = new WebhookReceiver();
  const prometheus = new PrometheusServer();
  let admin: NestFastifyApplication;
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    // /ok answers 200; /flaky 503 at the first attempt of a message, then 200 (a retry);
    // /gone 410 (permanent: a dead letter).
    const attempts = new Map<string, number>();
    receiver.answer = (request) => {
      if (request.path === '/gone') return { status: 410 };
      if (request.path !== '/flaky') return { status: 200 };
      const id = String((JSON.parse(request.body.toString()) as { messageId: string }).messageId);
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      return { status: attempts.get(id) === 1 ? 503 : 200 };
    };
    await receiver.start();
    await harness.start();
    admin = await startAdminBeside(harness);
    urls.ingest = harness.url;
    urls.admin = await admin.getUrl();
    urls.router = harness.routerUrl;
    urls.dispatcher = harness.dispatcherUrl;
    await prometheus.start(APPS.map((app) => new URL(urls[app]).host));
  });

  afterAll(async () => {
    await prometheus.stop();
    await admin?.close();
    await harness.close();
    await receiver.stop();
  });

  it('answers every dashboard expression with data after traffic', async () => {
    const ok = await harness.source();
    const flaky = await harness.source();
    const gone = await harness.source();
    await harness.webhookDestination(ok.id, { urls: [receiver.url('/ok')] });
    await harness.webhookDestination(flaky.id, { urls: [receiver.url('/flaky')] });
    await harness.webhookDestination(gone.id, { urls: [receiver.url('/gone')] });

    // An admin API call, so the admin app counts requests too.
    const listed = await fetch(`${urls.admin}/admin/v1/sources`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(listed.status).toBe(200);

    for (let i = 0; i < 5; i += 1) await harness.track(ok.writeKey, `ok-${i}`);
    await harness.track(flaky.writeKey, 'flaky-0');
    await harness.track(gone.writeKey, 'gone-0');
    // Filtered by the integrations object; refused by ingest (a whole request, a batch item).
    await harness.track(ok.writeKey, 'filtered-0', { integrations: { All: false } });
    const refused = await harness.post('/v1/track', { userId: 'u' }, { basic: ok.writeKey });
    expect(refused.status).toBe(400);
    const batch = await harness.post(
      '/v1/batch',
      { batch: [{ type: 'track', userId: 'u', event: 'E', messageId: 'ok-5' }, { type: 'track' }] },
      { basic: ok.writeKey },
    );
    expect(batch.body.rejected).toHaveLength(1);

    // 6 to /ok, 2 to /flaky (503, then 200 from the first retry tier), 1 to /gone.
    await receiver.received(9, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${receiver.requests.map((r) => r.path).join(' ')}`);
    });

    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(14);
    // Polled until every query has data; the last round's misses are the failure message.
    let missing: string[] = [];
    await eventually(
      async () => {
        missing = [];
        for (const { panel, expr } of queries) {
          const result = await prometheus.query(withVariables(expr));
          if (result.length === 0) missing.push(`${panel}: ${expr}`);
        }
        return missing.length === 0 ? true : undefined;
      },
      45_000,
      'every dashboard expression to return data',
    ).catch(() => undefined);
    expect(missing).toEqual([]);

    // Both consumers export their lag: the router's group and the dispatcher's two.
    const groups = (await prometheus.query('sluice_consumer_lag_records')).map(
      (series: any) => series.metric.group as string,
    );
    for (const group of ['sluice-router', 'sluice-dispatcher', 'sluice-dispatcher-retry']) {
      expect(groups).toContain(`${harness.prefix}${group}`);
    }
    // The retry tiers have a panel of their own, and the main topics' panel leaves them out.
    const tiers = queries.find((q) => q.panel === "Retry tiers' depth");
    const tierTopics = (await prometheus.query(withVariables(tiers?.expr ?? ''))).map(
      (series: any) => series.metric.topic as string,
    );
    expect(tierTopics).toContain(`${harness.prefix}sluice.deliveries.retry.1s.v1`);
    const main = queries.find((q) => q.panel === 'Consumer lag (main topics)');
    const mainTopics = (await prometheus.query(withVariables(main?.expr ?? ''))).map(
      (series: any) => series.metric.topic as string,
    );
    expect(mainTopics).toContain(`${harness.prefix}sluice.deliveries.v1`);
    expect(mainTopics.filter((topic) => topic.includes('.retry.'))).toEqual([]);
  });

  it('offers the jobs of the apps in the dashboard variable', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      templating: { list: { name: string; query?: { query: string } }[] };
    };
    const job = dashboard.templating.list.find((v) => v.name === 'job')?.query?.query ?? '';
    // label_values(<selector>, job) is the job label of the selector's series.
    const selector = /^label_values\((.*), job\)$/.exec(job)?.[1] ?? '';
    const series = await prometheus.query(withVariables(selector));
    expect(new Set(series.map((s: any) => s.metric.job as string))).toEqual(new Set(['sluice']));
    expect(series).toHaveLength(APPS.length);
  });

  it('evaluates the shipped alert rules over the real series: all healthy, the dead letter fires', async () => {
    const alerts = parse(readFileSync(ALERTS, 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const rules = alerts.groups.flatMap((g) => g.rules);
    // Each metric an alert names is exported by the running apps (or is Prometheus's `up`).
    const names = rules.flatMap((r) => alertMetricNames(r.expr));
    const present = new Set(
      (
        await prometheus.query(`group by (__name__) ({__name__=~"(${names.join('|')})(_bucket)?"})`)
      ).map((series: any) => (series.metric.__name__ as string).replace(/_bucket$/, '')),
    );
    // A metric with series only while something is wrong (the breaker gauge, while every
    // breaker is closed) has none here: declared in an app's /metrics is exported too.
    const declared = new Set<string>();
    for (const app of APPS) {
      const text = await (await fetch(`${urls[app]}/metrics`)).text();
      for (const [, name] of text.matchAll(/^# TYPE (\S+) /gm)) declared.add(name);
    }
    expect(names.filter((name) => !present.has(name) && !declared.has(name))).toEqual([]);
    // Everything else healthy traffic touches has series in Prometheus.
    expect(names.filter((name) => !present.has(name))).toEqual(['sluice_dispatcher_breaker_state']);
    // The target-down alert's selector matches every app's target.
    const down = rules.find((r) => r.alert === 'SluiceTargetDown')?.expr ?? '';
    const targets = await prometheus.query(down.replace(/\s*==\s*0\s*$/, ''));
    expect(targets).toHaveLength(APPS.length);

    let state: { name: string; health: string; lastError?: string }[] = [];
    let firing: { labels: Record<string, string>; state: string }[] = [];
    await eventually(
      async () => {
        const groups = (await prometheus.api('rules')).groups as { rules: typeof state }[];
        state = groups.flatMap((g) => g.rules);
        firing = (await prometheus.api('alerts')).alerts as typeof firing;
        const evaluated = state.length === rules.length && state.every((r) => r.health === 'ok');
        const dead = firing.some((a) => a.labels.alertname === 'SluiceDeadLetters');
        return evaluated && dead ? true : undefined;
      },
      30_000,
      'the rules to evaluate and the dead letter to fire',
    ).catch(() => undefined);
    expect(
      state.map((r) => ({ name: r.name, health: r.health, error: r.lastError ?? '' })),
    ).toEqual(rules.map((r) => ({ name: r.alert, health: 'ok', error: '' })));
    // /gone answered 410: a permanent failure, dead-lettered at once.
    expect(firing.filter((a) => a.labels.alertname === 'SluiceDeadLetters')).toEqual([
      expect.objectContaining({
        state: 'firing',
        labels: expect.objectContaining({ severity: 'warning' }),
      }),
    ]);
  });

  it('finds no problem with promtool check metrics in any app', async () => {
    const problems: Record<string, string> = {};
    for (const app of APPS) {
      const text = await (await fetch(`${urls[app]}/metrics`)).text();
      try {
        execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: 'pipe' });
      } catch (error) {
        const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
        problems[app] = `${stdout.toString()}${stderr.toString()}`.trim() || String(error);
      }
    }
    expect(problems).toEqual({});
  });
});
