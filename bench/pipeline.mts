/**
 * The pipeline benchmark (`npm run bench:pipeline`, bench/PIPELINE.md): the four apps as
 * separate processes against a broker and a PostgreSQL of its own, `/v1/track` calls one per
 * request, delivered signed to a webhook on loopback. Each round measures the pipeline at its
 * maximum (closed loop) and at 50% and 25% of it (open loop); a bare pipeline (a bare
 * node:http + Kafka server and a bare consume-and-POST loop) the same way, as the floor; and
 * each app alone at saturation on the backlog the one before it left. It prints CPU per call
 * of every app and the broker, latency from a request's send to its webhook's arrival, and the
 * goals' ratios, every figure measured in the same run.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';

import type { Admin } from 'kafkajs';

import { type AppName, APPS } from './chaos/apps.mts';
import { kafkaLibs, ROOT, Stand } from './chaos/stand.mts';
import { envReader, progress, runBench } from './common.mts';
import { createTopics, kafkaClient } from './kafka.mts';
import {
  CpuSampler,
  FROM_MARK,
  kafkaRequests,
  type Marks,
  marksOf,
  ProgressPoll,
  quantile,
  requestsBetween,
  TO_MARK,
  type Watched,
} from './pipeline-measure.mts';
import { holdReport, type PhaseRow, report, type RoundResult } from './pipeline-report.mts';
import { TrackSender } from './pipeline-traffic.mts';
import { firstJsonLine, type Managed, sleep, type Supervisor } from './processes.mts';

/** Longest wait, after a phase's sending stops, for its acknowledged calls to arrive. */
const DRAIN_TIMEOUT_MS = 60_000;
/** Longest an app alone may take to work off the backlog of a saturated phase. */
const BACKLOG_TIMEOUT_MS = 180_000;
/** The dispatcher's default DISPATCHER_CONNECTIONS_PER_ORIGIN, for the bare loop. */
const BARE_CONNECTIONS = 10;
/** The broker's JIT compiler threads, measured apart from it. */
const BROKER_JIT = 'broker JIT';
/** The bare pipeline's processes. */
const BARE = ['bare server', 'bare loop'] as const;
const BARE_LOOP = join(ROOT, 'bench', 'pipeline-bare-loop.mts');
const BARE_SERVER = join(ROOT, 'bench', 'bare-kafka.mts');

interface Settings {
  readonly seconds: number;
  readonly inFlight: number;
  readonly partitions: number;
  /** 0: only the pipeline at rest is measured (no bare pipeline, no traffic after the warm-up). */
  readonly rounds: number;
  /** How long the pipeline is watched at rest, once, before the rounds. */
  readonly restSeconds: number;
  /** Closed-loop traffic before anything is measured (the broker's JIT compiles for a while). */
  readonly warmUpSeconds: number;
  /** Only one open loop at this rate for the phase's time (to profile at one rate). */
  readonly holdRate?: number;
  readonly nodeArgs: readonly string[];
  readonly kafkaLibs: string;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number } = envReader(env, 'bench:pipeline');
  return {
    seconds: number('BENCH_PIPELINE_SECONDS', 20, 2, 3_600),
    inFlight: number('BENCH_PIPELINE_IN_FLIGHT', 64, 1, 4_096),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 3, 1, 100),
    rounds: number('BENCH_PIPELINE_ROUNDS', 3, 0, 20),
    restSeconds: number('BENCH_PIPELINE_REST_SECONDS', 10, 1, 3_600),
    warmUpSeconds: number('BENCH_PIPELINE_WARMUP_SECONDS', 30, 0, 3_600),
    holdRate: env.BENCH_PIPELINE_RATE ? number('BENCH_PIPELINE_RATE', 0, 1, 100_000) : undefined,
    nodeArgs: (env.BENCH_PIPELINE_NODE_ARGS ?? '').split(' ').filter(Boolean),
    kafkaLibs: kafkaLibs(env),
  };
}

/** The processes whose CPU is counted, by the name the report uses. */
type Measured = AppName | 'broker' | 'bare server' | 'bare loop';

class PipelineBench {
  private readonly s: Settings;
  private readonly stand: Stand;
  private readonly sampler: CpuSampler;
  private writeKey = '';
  private admin?: Admin;
  private bareServer?: Managed;
  private bareUrl = '';
  private bareLoop?: Managed;
  private readonly barePrefix = `bare.${Date.now()}.`;

  constructor(s: Settings) {
    this.s = s;
    this.stand = new Stand(
      'pipeline',
      s.kafkaLibs,
      { KAFKA_TOPIC_PARTITIONS: String(s.partitions) },
      s.nodeArgs,
    );
    this.sampler = new CpuSampler(() => this.pids());
  }

  /** One open loop at a fixed rate through the pipeline alone, for a profile. */
  async hold(rate: number): Promise<PhaseRow> {
    this.writeKey = await this.stand.setUp();
    this.sampler.start();
    await this.firstDelivery(this.stand.apps.url('ingest'));
    await this.warmUp(this.stand.apps.url('ingest'));
    progress(`pipeline: ${rate}/s for ${this.s.seconds} s`);
    const row = await this.live(
      `pipeline ${rate}/s`,
      this.stand.apps.url('ingest'),
      (sender) => sender.openLoop(rate),
      rate,
    );
    // Graceful stops, so a profiler given in BENCH_PIPELINE_NODE_ARGS writes its file.
    for (const app of APPS) await this.stand.apps.terminate(app);
    return row;
  }

  async run(): Promise<{ idle: PhaseRow; rounds: RoundResult[] }> {
    this.writeKey = await this.stand.setUp();
    this.sampler.start();
    await this.firstDelivery(this.stand.apps.url('ingest'));
    await this.warmUp(this.stand.apps.url('ingest'));
    if (this.s.rounds > 0) {
      await this.startBare();
      await this.firstDelivery(this.bareUrl);
      await this.warmUp(this.bareUrl);
    }
    progress(`the pipeline at rest, ${this.s.restSeconds} s`);
    const idle = await this.atRest();
    const rounds: RoundResult[] = [];
    for (let round = 1; round <= this.s.rounds; round += 1) {
      progress(`round ${round} of ${this.s.rounds}`);
      rounds.push(await this.round());
      this.sampler.forget(Date.now());
    }
    return { idle, rounds };
  }

  async tearDown(): Promise<void> {
    this.sampler.stop();
    await this.admin?.disconnect().catch(() => undefined);
    await this.stand.tearDown();
  }

  get supervisor(): Supervisor {
    return this.stand.supervisor;
  }

  private async round(): Promise<RoundResult> {
    const ingest = this.stand.apps.url('ingest');
    const closed = (sender: TrackSender) => sender.closedLoop(this.s.inFlight);
    progress(`pipeline: closed loop, ${this.s.inFlight} in flight`);
    const max = await this.live('pipeline max', ingest, closed);
    const half = Math.max(1, Math.round(max.deliveredPerSecond * 0.5));
    const quarter = Math.max(1, Math.round(max.deliveredPerSecond * 0.25));
    progress(`pipeline: ${half}/s (50%)`);
    const at50 = await this.live('pipeline 50%', ingest, (s) => s.openLoop(half), half);
    progress(`pipeline: ${quarter}/s (25%)`);
    const at25 = await this.live('pipeline 25%', ingest, (s) => s.openLoop(quarter), quarter);
    progress('bare pipeline: closed loop');
    const bareMax = await this.live('bare max', this.bareUrl, closed);
    progress(`bare pipeline: ${half}/s`);
    const bare50 = await this.live('bare at 50% rate', this.bareUrl, (s) => s.openLoop(half), half);
    const saturated = await this.saturated();
    return { max, at50, at25, bareMax, bare50, saturated };
  }

  /** Nothing sent: what the pipeline costs at rest, in cores and Kafka requests a second. */
  private async atRest(): Promise<PhaseRow> {
    const before = await this.requests();
    const from = Date.now();
    await sleep(this.s.restSeconds * 1_000);
    const to = Date.now();
    const after = await this.requests();
    const { perProcess, machine } = this.sampler.between(from, to);
    const jit = takeJit(perProcess);
    const seconds = (to - from) / 1_000;
    return {
      label: 'at rest (per second)',
      deliveredPerSecond: 0,
      cpuUs: perMeasured(perProcess, (cpu) => (cpu * 1e6) / seconds),
      brokerJitUs: (jit * 1e6) / seconds,
      machineCores: machine / seconds,
      requests: perApp(before, after, seconds),
    };
  }

  /**
   * One phase of live traffic through the pipeline at `url` (or the bare one): sends for the
   * phase's time, waits for its acknowledged calls to arrive, and measures between the 10%
   * and 90% marks of their arrivals.
   */
  private async live(
    label: string,
    url: string,
    start: (sender: TrackSender) => void,
    targetPerSecond?: number,
  ): Promise<PhaseRow> {
    const sender = new TrackSender(url, this.writeKey);
    const before = await this.requests();
    start(sender);
    await sleep(this.s.seconds * 1_000);
    await sender.stop();
    sender.close();
    const acked = [...sender.calls.values()].filter((c) => c.ackedAt !== undefined);
    const lost = await this.drain(acked);
    const after = await this.requests();
    const arrivals: { at: number; latency: number }[] = [];
    for (const call of acked) {
      const at = this.stand.receiver.arrivals.get(call.messageId)?.at[0];
      if (at !== undefined) arrivals.push({ at, latency: at - call.sentAt });
    }
    arrivals.sort((a, b) => a.at - b.at);
    const marks = marksOf(arrivals.map((a) => a.at));
    const inWindow = marks
      ? arrivals.filter((a) => a.at >= marks.from && a.at <= marks.to).map((a) => a.latency)
      : [];
    inWindow.sort((a, b) => a - b);
    return {
      ...this.cost(label, marks, url === this.bareUrl ? BARE : APPS),
      targetPerSecond,
      sentPerSecond: sender.calls.size / this.s.seconds,
      p50Ms: quantile(inWindow, 0.5),
      p99Ms: quantile(inWindow, 0.99),
      maxMs: inWindow[inWindow.length - 1] ?? NaN,
      lost,
      failures: [...sender.failures].map(([kind, n]) => `${kind}:${n}`).join(' '),
      requests: perApp(before, after, arrivals.length),
    };
  }

  /**
   * Each app alone at saturation, on the backlog the one before it left: ingest with the
   * others stopped (a closed loop), then the router on ingest's calls, the dispatcher on the
   * router's deliveries, the admin app on the dispatcher's outcomes. Ends with all four up.
   */
  private async saturated(): Promise<PhaseRow[]> {
    const apps = this.stand.apps;
    for (const app of ['router', 'dispatcher', 'admin'] as const) await apps.terminate(app);
    const topic = (name: string) => `${this.stand.topicPrefix}${name}`;

    progress('alone: ingest, closed loop');
    const sender = new TrackSender(apps.url('ingest'), this.writeKey);
    sender.closedLoop(this.s.inFlight);
    await sleep(this.s.seconds * 1_000);
    await sender.stop();
    sender.close();
    const acked = [...sender.calls.values()].filter((c) => c.ackedAt !== undefined);
    const answered = acked.map((c) => c.ackedAt!).sort((a, b) => a - b);
    const ingest = this.cost('ingest alone', marksOf(answered), ['ingest']);
    const n = acked.length;

    progress(`alone: router, ${n} calls`);
    const deliveriesEnd = await this.endOffsets(topic('sluice.deliveries.v1'));
    const routed = new ProgressPoll(
      async () => (await this.endOffsets(topic('sluice.deliveries.v1'))) - deliveriesEnd,
    );
    const router = await this.alone('router', routed, n);
    await apps.terminate('router');

    progress(`alone: dispatcher, ${n} deliveries`);
    // Nothing else is sent meanwhile: every arrival is one of them.
    const arrivedBefore = this.stand.receiver.times.length;
    const delivered = new ProgressPoll(() =>
      Promise.resolve(this.stand.receiver.times.length - arrivedBefore),
    );
    const dispatcher = await this.alone('dispatcher', delivered, n);
    await apps.terminate('dispatcher');

    progress('alone: admin');
    const outcomes = topic('sluice.deliveries.outcomes.v1');
    const groups = [
      `${this.stand.topicPrefix}sluice-admin`,
      `${this.stand.topicPrefix}sluice-ledger`,
    ];
    const end = await this.endOffsets(outcomes);
    const start = await Promise.all(groups.map((g) => this.committed(g, outcomes)));
    const owed = groups.reduce((k, _, i) => k + (end - start[i]), 0);
    const committed = new ProgressPoll(async () => {
      const now = await Promise.all(groups.map((g) => this.committed(g, outcomes)));
      return now.reduce((k, c, i) => k + (c - start[i]), 0);
    });
    // Progress is in outcome records (many outcomes each), the cost per call of the n calls.
    const adminMarks = await this.pollUntil('admin', committed, owed);
    const admin = this.cost(
      'admin alone',
      adminMarks && { ...adminMarks, count: n * (TO_MARK - FROM_MARK) },
      ['admin'],
    );

    for (const app of ['router', 'dispatcher'] as const) await apps.start(app);
    await this.firstDelivery(apps.url('ingest'));
    return [ingest, router, dispatcher, admin, sumRows([ingest, router, dispatcher, admin])];
  }

  /** Starts `app` on a backlog of `total` and measures it between its progress marks. */
  private async alone(app: AppName, poll: ProgressPoll, total: number): Promise<PhaseRow> {
    const marks = await this.pollUntil(app, poll, total);
    return this.cost(`${app} alone`, marks, [app]);
  }

  private async pollUntil(
    app: AppName,
    poll: ProgressPoll,
    total: number,
  ): Promise<Marks | undefined> {
    poll.start();
    await this.stand.apps.start(app);
    const deadline = Date.now() + BACKLOG_TIMEOUT_MS;
    while (poll.done < total && Date.now() < deadline) await sleep(100);
    await poll.stop();
    if (poll.done < total) progress(`${app} handled ${poll.done} of ${total} in time`);
    return poll.marks(total);
  }

  /**
   * CPU per call between the marks of the processes in `only` and the broker: the others are
   * stopped or idle (the bare pipeline's during the pipeline's phases, and the other way round).
   */
  private cost(label: string, marks: Marks | undefined, only: readonly Measured[]): PhaseRow {
    if (!marks) return { label, deliveredPerSecond: NaN, cpuUs: {}, machineCores: NaN };
    const { perProcess, machine } = this.sampler.between(marks.from, marks.to);
    const jit = takeJit(perProcess);
    for (const name of perProcess.keys()) {
      if (name !== 'broker' && !only.includes(name as Measured)) perProcess.delete(name);
    }
    const seconds = (marks.to - marks.from) / 1_000;
    return {
      label,
      deliveredPerSecond: marks.count / seconds,
      cpuUs: perMeasured(perProcess, (cpu) => (cpu * 1e6) / marks.count),
      brokerJitUs: (jit * 1e6) / marks.count,
      machineCores: machine / seconds,
    };
  }

  private pids(): Record<Measured | typeof BROKER_JIT, Watched> {
    const apps = this.stand.apps;
    const running = (m?: Managed) => (m?.running ? m.pid : undefined);
    return {
      ingest: apps.pid('ingest'),
      router: apps.pid('router'),
      dispatcher: apps.pid('dispatcher'),
      admin: apps.pid('admin'),
      broker: this.stand.broker.pid(),
      [BROKER_JIT]: { pid: this.stand.broker.pid(), threads: /^C\d CompilerThre/ },
      'bare server': running(this.bareServer),
      'bare loop': running(this.bareLoop),
    };
  }

  private async requests(): Promise<Map<AppName, Map<string, number>>> {
    const apps = this.stand.apps;
    const counts = await Promise.all(APPS.map((app) => kafkaRequests(apps.url(app))));
    return new Map(APPS.map((app, i) => [app, counts[i]]));
  }

  /** The bare node:http + Kafka server and the bare consume-and-POST loop, on a topic of theirs. */
  private async startBare(): Promise<void> {
    const brokers = this.stand.broker.brokers;
    this.admin = kafkaClient(brokers).admin();
    await this.admin.connect();
    const topic = `${this.barePrefix}calls`;
    await createTopics(this.admin, [topic], this.s.partitions);
    const supervisor = this.stand.supervisor;
    this.bareServer = supervisor.spawn(
      'bare server',
      process.execPath,
      [
        BARE_SERVER,
        JSON.stringify({ brokers, topic, sourceId: 'bare', dist: this.stand.buildDir }),
      ],
      {},
    );
    const { port } = (await firstJsonLine(this.bareServer, 60_000)) as { port: number };
    this.bareUrl = `http://127.0.0.1:${port}`;
    this.bareLoop = supervisor.spawn(
      'bare loop',
      process.execPath,
      [
        BARE_LOOP,
        JSON.stringify({
          brokers,
          topic,
          groupId: `${this.barePrefix}loop`,
          url: this.stand.receiver.url,
          secret: this.stand.secret,
          connections: BARE_CONNECTIONS,
          partitions: this.s.partitions,
        }),
      ],
      {},
    );
    await firstJsonLine(this.bareLoop, 60_000);
  }

  /** Closed-loop traffic for the warm-up's time, waiting for all of it to arrive. */
  private async warmUp(url: string): Promise<void> {
    if (this.s.warmUpSeconds === 0) return;
    progress(`warming up through ${url}, ${this.s.warmUpSeconds} s`);
    const sender = new TrackSender(url, this.writeKey);
    sender.closedLoop(this.s.inFlight);
    await sleep(this.s.warmUpSeconds * 1_000);
    await sender.stop();
    sender.close();
    await this.drain([...sender.calls.values()].filter((c) => c.ackedAt !== undefined));
  }

  /** Sends a call a second until one arrives: everything on the way is up. */
  private async firstDelivery(url: string): Promise<void> {
    progress(`waiting for a first delivery through ${url}`);
    const sender = new TrackSender(url, this.writeKey);
    sender.openLoop(10);
    const deadline = Date.now() + 120_000;
    const arrived = () =>
      [...sender.calls.keys()].some((id) => this.stand.receiver.arrivals.has(id));
    while (!arrived()) {
      if (Date.now() > deadline) throw new Error(`no delivery through ${url} within 120 s`);
      await sleep(100);
    }
    await sender.stop();
    sender.close();
    await this.drain([...sender.calls.values()].filter((c) => c.ackedAt !== undefined));
  }

  /** Waits until every one of `calls` arrived, or the drain timeout; answers how many did not. */
  private async drain(calls: readonly { messageId: string }[]): Promise<number> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    let waiting = [...calls];
    while (Date.now() < deadline) {
      waiting = waiting.filter((c) => !this.stand.receiver.arrivals.has(c.messageId));
      if (waiting.length === 0) return 0;
      await sleep(200);
    }
    progress(`${waiting.length} acknowledged calls did not arrive within the drain timeout`);
    return waiting.length;
  }

  private async endOffsets(topic: string): Promise<number> {
    const offsets = await this.admin!.fetchTopicOffsets(topic);
    return offsets.reduce((k, p) => k + Number(p.high), 0);
  }

  private async committed(groupId: string, topic: string): Promise<number> {
    const [found] = await this.admin!.fetchOffsets({ groupId, topics: [topic] });
    return (found?.partitions ?? []).reduce((k, p) => k + Math.max(0, Number(p.offset)), 0);
  }
}

/**
 * Takes the broker's JIT compiler threads out of the broker's CPU and answers theirs: the
 * compiler works for minutes after a start and whenever the traffic changes shape, a cost of
 * the broker's start, shown apart and not counted per call.
 */
function takeJit(perProcess: Map<string, number>): number {
  const jit = perProcess.get(BROKER_JIT) ?? NaN;
  perProcess.delete(BROKER_JIT);
  const broker = perProcess.get('broker');
  if (broker !== undefined) perProcess.set('broker', broker - jit);
  return jit;
}

/** Per measured process: `f` of its CPU seconds. */
function perMeasured(
  perProcess: Map<string, number>,
  f: (cpuSeconds: number) => number,
): Partial<Record<string, number>> {
  const out: Partial<Record<string, number>> = {};
  for (const [name, cpu] of perProcess) out[name] = f(cpu);
  return out;
}

/** Kafka requests of each app between two readings, divided by `per`. */
function perApp(
  before: Map<AppName, Map<string, number>>,
  after: Map<AppName, Map<string, number>>,
  per: number,
): Map<AppName, Map<string, number>> {
  const out = new Map<AppName, Map<string, number>>();
  for (const app of APPS) {
    const none = new Map<string, number>();
    const delta = requestsBetween(before.get(app) ?? none, after.get(app) ?? none);
    for (const [api, n] of delta) delta.set(api, n / per);
    out.set(app, delta);
  }
  return out;
}

/** The apps alone added up: each one's CPU per call, with the broker's in its phase. */
function sumRows(rows: readonly PhaseRow[]): PhaseRow {
  const cpuUs: Partial<Record<string, number>> = {};
  for (const row of rows) {
    for (const [name, us] of Object.entries(row.cpuUs))
      cpuUs[name] = (cpuUs[name] ?? 0) + (us ?? NaN);
  }
  return { label: 'sum of the four alone', deliveredPerSecond: NaN, cpuUs, machineCores: NaN };
}

const settings = readSettings(process.env);
const bench = new PipelineBench(settings);
runBench({
  supervisor: bench.supervisor,
  stand: bench,
  run: async () => {
    if (settings.holdRate !== undefined) return holdReport(await bench.hold(settings.holdRate));
    const { idle, rounds } = await bench.run();
    const cpu = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'})`;
    return report(
      {
        machine: `${cpu}, Node ${process.version}`,
        seconds: settings.seconds,
        partitions: settings.partitions,
        inFlight: settings.inFlight,
      },
      idle,
      rounds,
    );
  },
});
