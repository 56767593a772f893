import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually, TEST_ADMIN_TOKEN } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/**
 * The real Prometheus server (Debian's `prometheus`) scrapes the four apps while traffic goes
 * through ingest, the router and the dispatcher to a local receiver; then every expression of
 * the shipped Grafana dashboard must return data, and `promtool check metrics` must find no
 * problem in any app's /metrics.
 */

const DASHBOARD = join(__dirname, '../../../docker/grafana/dashboards/sluice.json');
/** Stands in for Grafana's `$__rate_interval` (at least four scrape intervals of 1 s). */
const RATE_INTERVAL = '30s';
const APPS = ['ingest', 'admin', 'router', 'dispatcher'] as const;

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
    const config = [
      'global:',
      '  scrape_interval: 1s',
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
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { status: string; error?: string; data: any };
    if (body.status !== 'success') throw new Error(`query failed: ${body.error} (${expr})`);
    return body.data.result as unknown[];
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
          const result = await prometheus.query(expr.replaceAll('$__rate_interval', RATE_INTERVAL));
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
