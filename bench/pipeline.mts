/**
 * The pipeline benchmark (`npm run bench:pipeline`, bench/PIPELINE.md): the four apps as
 * separate processes against a broker and a PostgreSQL of its own, `/v1/track` calls one per
 * request, delivered to a webhook on loopback. A closed-loop phase finds the maximum, then
 * open-loop phases run at shares of it. Per phase: rates, CPU per delivered call for each app
 * and the broker (from /proc), and the latency from a request's send to the webhook's arrival.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

import { type Apps, APPS } from './chaos/apps.mts';
import { kafkaLibs, Stand } from './chaos/stand.mts';
import { sleep } from './chaos/traffic.mts';
import { envReader, progress } from './common.mts';
import { TrackSender } from './pipeline-traffic.mts';
import { cpuSeconds, machineBusySeconds } from './processes.mts';
import { count, fixed, table } from './report.mts';

/** Share of each phase left out of the measurements as warm-up. */
const WARMUP_SHARE = 0.2;
/** Longest wait, after a phase's sending stops, for its acknowledged calls to arrive. */
const DRAIN_TIMEOUT_MS = 60_000;
/** Shares of the closed loop's delivered/s at which the open-loop phases run. */
const OPEN_SHARES = [0.25, 0.5] as const;
const MEASURED = [...APPS, 'broker'] as const;
type Measured = (typeof MEASURED)[number];

interface Settings {
  readonly seconds: number;
  readonly inFlight: number;
  readonly partitions: number;
  readonly kafkaLibs: string;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number } = envReader(env, 'bench:pipeline');
  return {
    seconds: number('BENCH_PIPELINE_SECONDS', 20, 2, 3_600),
    inFlight: number('BENCH_PIPELINE_IN_FLIGHT', 64, 1, 4_096),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 3, 1, 100),
    kafkaLibs: kafkaLibs(env),
  };
}

/** One phase's figures, over its window (the phase after the warm-up). */
interface PhaseResult {
  readonly label: string;
  /** Requests a second asked for (open loop); undefined for the closed loop. */
  readonly targetPerSecond?: number;
  readonly sentPerSecond: number;
  readonly deliveredPerSecond: number;
  readonly cpuUsPerCall: Record<Measured, number>;
  readonly machineCores: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Calls sent in the window and acknowledged that never arrived within the drain timeout. */
  readonly undelivered: number;
  /** Requests not answered 200, by kind. */
  readonly failures: string;
}

class PipelineBench {
  private readonly s: Settings;
  private readonly stand: Stand;

  constructor(s: Settings) {
    this.s = s;
    this.stand = new Stand('pipeline', s.kafkaLibs, {
      KAFKA_TOPIC_PARTITIONS: String(s.partitions),
    });
  }

  private get receiver() {
    return this.stand.receiver;
  }

  private get apps() {
    return this.stand.apps;
  }

  async run(): Promise<PhaseResult[]> {
    const writeKey = await this.stand.setUp();
    await this.firstDelivery(this.apps, writeKey);
    const results: PhaseResult[] = [];
    progress(`closed loop, ${this.s.inFlight} in flight, ${this.s.seconds} s`);
    const max = await this.phase(`max (closed, ${this.s.inFlight} in flight)`, writeKey, (sender) =>
      sender.closedLoop(this.s.inFlight),
    );
    results.push(max);
    for (const share of OPEN_SHARES) {
      const rate = Math.max(1, Math.round(max.deliveredPerSecond * share));
      progress(`open loop at ${share * 100}% of the maximum: ${rate}/s, ${this.s.seconds} s`);
      results.push(
        await this.phase(
          `${share * 100}% (open)`,
          writeKey,
          (sender) => sender.openLoop(rate),
          rate,
        ),
      );
    }
    return results;
  }

  tearDown(): Promise<void> {
    return this.stand.tearDown();
  }

  killNow(): void {
    this.stand.killNow();
  }

  /** Sends a call a second until one arrives: every app is up and the settings reached them. */
  private async firstDelivery(apps: Apps, writeKey: string): Promise<void> {
    progress('waiting for the first delivery');
    const sender = new TrackSender(apps.url('ingest'), writeKey);
    sender.openLoop(10);
    const deadline = Date.now() + 120_000;
    while (this.receiver.times.length === 0) {
      if (Date.now() > deadline) throw new Error('no delivery within 120 s');
      await sleep(100);
    }
    await sender.stop();
    sender.close();
    await this.drain(sender.sentBetween(0, Infinity).filter((c) => c.ackedAt !== undefined));
  }

  private async phase(
    label: string,
    writeKey: string,
    start: (sender: TrackSender) => void,
    targetPerSecond?: number,
  ): Promise<PhaseResult> {
    const sender = new TrackSender(this.apps.url('ingest'), writeKey);
    const t0 = Date.now();
    start(sender);
    await sleep(this.s.seconds * 1_000 * WARMUP_SHARE);
    const from = Date.now();
    const before = this.cpu();
    const machineBefore = machineBusySeconds();
    await sleep(t0 + this.s.seconds * 1_000 - Date.now());
    const to = Date.now();
    const after = this.cpu();
    const machineAfter = machineBusySeconds();
    await sender.stop();
    sender.close();

    const windowS = (to - from) / 1_000;
    const sent = sender.sentBetween(from, to);
    const acked = sent.filter((c) => c.ackedAt !== undefined);
    await this.drain(acked);
    const delivered = this.receiver.times.filter((t) => t >= from && t < to).length;
    const latencies: number[] = [];
    let undelivered = 0;
    for (const call of acked) {
      const arrival = this.receiver.arrivals.get(call.messageId)?.at[0];
      if (arrival === undefined) undelivered += 1;
      else latencies.push(arrival - call.sentAt);
    }
    latencies.sort((a, b) => a - b);
    const cpuUsPerCall = {} as Record<Measured, number>;
    for (const name of MEASURED) {
      cpuUsPerCall[name] =
        delivered > 0 ? (((after[name] ?? NaN) - (before[name] ?? NaN)) * 1e6) / delivered : NaN;
    }
    return {
      label,
      targetPerSecond,
      sentPerSecond: sent.length / windowS,
      deliveredPerSecond: delivered / windowS,
      cpuUsPerCall,
      machineCores: ((machineAfter ?? NaN) - (machineBefore ?? NaN)) / windowS,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      undelivered,
      failures: [...sender.failures].map(([kind, n]) => `${kind}:${n}`).join(' '),
    };
  }

  /** CPU seconds so far of each app's process and the broker's. */
  private cpu(): Partial<Record<Measured, number>> {
    const out: Partial<Record<Measured, number>> = {};
    for (const app of APPS) out[app] = cpuSeconds(this.apps.pid(app));
    out.broker = cpuSeconds(this.brokerPid());
    return out;
  }

  private brokerPid(): number | undefined {
    try {
      return Number(readFileSync(join(this.stand.broker.dir, 'kafka', 'kafka.pid'), 'utf8').trim());
    } catch {
      return undefined;
    }
  }

  /** Waits until every one of `calls` arrived at the receiver, or the drain timeout. */
  private async drain(calls: readonly { messageId: string }[]): Promise<void> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    let waiting = [...calls];
    while (Date.now() < deadline) {
      waiting = waiting.filter((c) => !this.receiver.arrivals.has(c.messageId));
      if (waiting.length === 0) return;
      await sleep(200);
    }
    progress(`${waiting.length} acknowledged calls did not arrive within the drain timeout`);
  }
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function report(s: Settings, results: readonly PhaseResult[]): string {
  const header = [
    'phase',
    'target/s',
    'sent/s',
    'delivered/s',
    ...MEASURED.map((m) => `${m} µs`),
    'total µs',
    'machine cores',
    'p50 ms',
    'p99 ms',
    'max ms',
    'lost',
    'failed requests',
  ];
  const rows = results.map((r) => {
    const total = MEASURED.reduce((sum, m) => sum + r.cpuUsPerCall[m], 0);
    return [
      r.label,
      r.targetPerSecond === undefined ? '-' : count(r.targetPerSecond),
      count(r.sentPerSecond),
      count(r.deliveredPerSecond),
      ...MEASURED.map((m) => fixed(r.cpuUsPerCall[m], 0)),
      fixed(total, 0),
      fixed(r.machineCores, 2),
      fixed(r.p50Ms, 0),
      fixed(r.p99Ms, 0),
      fixed(r.maxMs, 0),
      String(r.undelivered),
      r.failures || '-',
    ];
  });
  return [
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; ` +
      `${s.seconds} s a phase, ${s.partitions} partitions`,
    `rates and CPU over each phase's steady window: the phase after its first ` +
      `${WARMUP_SHARE * 100}% (warm-up); not between the 10% and 90% marks of its deliveries`,
    'µs = CPU µs (user + system, from /proc) per call delivered in the window; latency = ' +
      "request sent -> webhook arrival (ms clock) of the window's acknowledged calls; lost = " +
      `acknowledged, not arrived within ${DRAIN_TIMEOUT_MS / 1_000} s`,
    '',
    table([header, ...rows]),
  ].join('\n');
}

async function main(): Promise<void> {
  const s = readSettings(process.env);
  const bench = new PipelineBench(s);
  const interrupted = () => {
    bench.killNow();
    void bench.tearDown().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let code = 0;
  try {
    console.log(report(s, await bench.run()));
  } catch (error) {
    console.error(error);
    code = 1;
  } finally {
    await bench.tearDown();
  }
  process.exit(code);
}

void main();
