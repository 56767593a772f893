/**
 * The ingest benchmark (docs/performance.md): ratios of the ingest app to physical limits
 * measured on the same machine in the same run, A/B runs interleaved, medians printed.
 *
 *   (a) `/v1/batch` acknowledged events/s ÷ Kafka's ProducerPerformance records/s (same
 *       record size, acks=all)
 *   (b) `/v1/track` requests/s ÷ a bare `node:http` server that parses the same body
 *   (c) `/v1/track` p99 latency at half the measured maximum rate (open loop)
 *
 * Beside them, `/v1/t` with `text/plain` and a page's `Origin`, as Segment's browser library
 * sends a track call, through the same load tool: the short route against the long one; and
 * `/v1/track` of ingest with OpenTelemetry traces on at 10% and at 100% of new traces, and on
 * with none sampled (exported to a local OTLP sink), against an ingest with traces off (the
 * default) started with them; all of them start anew each round. An ingest at 10% switching
 * sampling on and off every second sets its sampled requests' CPU against its unsampled ones'.
 *
 * Run through `npm run bench:ingest` (bench/run.sh builds, starts the services, migrates).
 */
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';

import { progress, runBench } from './common.mts';
import { batchBody, trackBodies } from './bodies.mts';
import {
  PERF_WARMUP_SECONDS,
  probeRecordSize,
  producerPerformance,
  type RecordSize,
} from './kafka.mts';
import { type PhaseCosts, phaseRatio, requestCosts } from './phase-costs.mts';
import { STOLEN_MEANS, Supervisor } from './processes.mts';
import { count, fixed, median, medianOf, ratioTable, type Series, seriesTable } from './report.mts';
import { type LoadPlan, runLoad } from './runs.mts';
import { readSettings, type Settings } from './settings.mts';
import { Stand, type Target } from './stand.mts';

const GOAL_BATCH = 0.35;
const SUCCESS = '{"success":true}';
const GOAL_TRACK = 0.7;
/** The origin of the page the browser-like `/v1/t` requests claim to come from. */
const PAGE_ORIGIN = 'http://127.0.0.1:3000';
/** Distinct `/v1/track` bodies (one user each), so records spread over the partitions. */
const TRACK_BODIES = 16;
/** ProducerPerformance records in the calibration run; each later run is sized from the last. */
const PERF_CALIBRATION_RECORDS = 250_000;
const PERF_MIN_RECORDS = 50_000;
/** Slack on the records of a ProducerPerformance run, so its steady part lasts `seconds`. */
const PERF_RECORDS_SLACK = 1.2;

/** The measurements, in the order the table shows them. */
interface Measurements {
  readonly batch: Series;
  readonly perf: Series;
  readonly track: Series;
  readonly shortTrack: Series;
  readonly traced10: Series;
  readonly traced100: Series;
  readonly traced0: Series;
  readonly phases10: Series;
  readonly untraced: Series;
  readonly tracesOff: Series;
  readonly bare: Series;
  readonly bareFastify: Series;
  readonly bareKafka: Series;
  readonly trackAtHalf: Series;
  readonly bareAtHalf: Series;
}

const series = (label: string, unit: string): Series => ({ label, unit, samples: [] });
const odd = (round: number) => round % 2 === 1;

class IngestBench {
  readonly supervisor = new Supervisor();
  readonly stand: Stand;
  private readonly settings: Settings;
  private readonly trackBodies: string[];
  private readonly batchBody: string;
  private readonly warnings: string[] = [];
  /** Each phases10 run's CPU a request in its sampled and its unsampled phases. */
  private readonly phaseRuns: PhaseCosts[] = [];
  private recordSize?: RecordSize;
  private perfRecords = PERF_CALIBRATION_RECORDS;
  private ingest?: Target;
  private bare?: Target;
  private bareFastify?: Target;
  private bareKafka?: Target;

  constructor(settings: Settings) {
    this.settings = settings;
    this.stand = new Stand({ ...settings, traced: true }, this.supervisor);
    this.trackBodies = trackBodies(TRACK_BODIES, settings.callBytes);
    this.batchBody = batchBody(settings.batchCalls, settings.callBytes);
  }

  /** Sets up, measures, and returns the report (the caller tears down). */
  async run(): Promise<string> {
    progress(`setting up (topic prefix ${this.stand.prefix})`);
    await this.stand.setUp();
    this.ingest = this.stand.ingest;
    this.bare = this.stand.bare;
    this.bareFastify = this.stand.bareFastify;
    this.bareKafka = this.stand.bareKafka;
    await this.preflight();
    await this.warmUp();
    const maxima = await this.measureMaxima();
    const halfRate = Math.round(medianOf(maxima.track, 'value') / 2);
    const latency = await this.measureAtRate(halfRate);
    return this.report({ ...maxima, ...latency }, halfRate);
  }

  /** One request of each kind, so a set-up mistake fails here with the answer it got. */
  private async preflight(): Promise<void> {
    // The batch first: the record-size probe reads the first records of the calls topic.
    const checks: [Target | undefined, string, string][] = [
      [this.ingest, '/v1/batch', this.batchBody],
      [this.ingest, '/v1/track', this.trackBodies[0]],
      [this.ingest, '/v1/t', this.trackBodies[0]],
      [this.bare, '/v1/track', this.trackBodies[0]],
      [this.bareFastify, '/v1/track', this.trackBodies[0]],
      [this.bareKafka, '/v1/track', this.trackBodies[0]],
    ];
    for (const [target, path, body] of checks) {
      const response = await fetch(`http://127.0.0.1:${target?.port}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${this.stand.writeKey}:`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body,
      });
      const answer = await response.text();
      if (response.status !== 200 || answer !== SUCCESS) {
        throw new Error(`${target?.name} ${path} answered ${response.status} ${answer}`);
      }
    }
  }

  private async warmUp(): Promise<void> {
    progress('warming up (not counted)');
    const short = this.shortRun();
    await this.load(series('warm-up /v1/batch', 'events/s'), this.ingest, {
      ...this.batchPlan(),
      ...short,
    });
    const probeGroup = `${this.stand.prefix}bench-probe`;
    this.recordSize = await probeRecordSize(this.stand.kafka, this.stand.callsTopic, probeGroup);
    await this.perf(series('warm-up ProducerPerformance', 'records/s'));
    const track = { ...this.trackPlan(), ...short };
    await this.load(series('warm-up /v1/track', 'requests/s'), this.ingest, track);
    await this.load(series('warm-up /v1/t', 'requests/s'), this.ingest, {
      ...this.shortTrackPlan(),
      ...short,
    });
    await this.load(series('warm-up bare node:http', 'requests/s'), this.bare, track);
    await this.load(series('warm-up bare Fastify', 'requests/s'), this.bareFastify, track);
    await this.load(series('warm-up bare node:http + Kafka', 'requests/s'), this.bareKafka, track);
    await this.warmUpTraced(track);
  }

  /** A warm-up run's length: 3 s, or the measured runs' when shorter. */
  private shortRun(): Pick<LoadPlan, 'warmupMs' | 'durationMs'> {
    return { warmupMs: 0, durationMs: Math.min(3_000, this.settings.seconds * 1000) };
  }

  /** The traced ingests are processes of their own: each warms up too. */
  private async warmUpTraced(track: LoadPlan): Promise<void> {
    const { traced, untraced, tracesOff, phased } = this.stand;
    const targets: [string, Target | undefined][] = [
      ...Object.entries(traced),
      ['untraced', untraced],
      ['traces off', tracesOff],
      ['switched on and off', phased?.target],
    ];
    for (const [side, target] of targets) {
      await this.load(series(`warm-up /v1/track, ${side}`, 'requests/s'), target, track);
    }
  }

  /** The traces sides' ingests started anew and warmed up, as before the first round. */
  private async freshTraced(): Promise<void> {
    progress('  starting the traced ingests anew');
    await this.stand.restartTraced();
    await this.warmUpTraced({ ...this.trackPlan(), ...this.shortRun() });
  }

  /** (a) and (b): closed loop, every side once per round, A and B swapping order. */
  private async measureMaxima(): Promise<Omit<Measurements, 'trackAtHalf' | 'bareAtHalf'>> {
    const m = {
      batch: series('ingest /v1/batch', 'events/s'),
      perf: series('ProducerPerformance', 'records/s'),
      track: series('ingest /v1/track', 'requests/s'),
      shortTrack: series('ingest /v1/t text/plain', 'requests/s'),
      traced10: series('ingest /v1/track, traces 10%', 'requests/s'),
      traced100: series('ingest /v1/track, traces 100%', 'requests/s'),
      traced0: series('ingest /v1/track, traces 0%', 'requests/s'),
      phases10: series('ingest /v1/track, traces 10% switched on and off', 'requests/s'),
      untraced: series('ingest /v1/track, built without tracing', 'requests/s'),
      tracesOff: series('ingest /v1/track, traces off, with the traced ones', 'requests/s'),
      bare: series('bare node:http', 'requests/s'),
      bareFastify: series('bare Fastify', 'requests/s'),
      bareKafka: series('bare node:http + Kafka', 'requests/s'),
    };
    const runs = {
      batch: () => this.load(m.batch, this.ingest, this.batchPlan()),
      perf: () => this.perf(m.perf),
      track: () => this.load(m.track, this.ingest, this.trackPlan()),
      shortTrack: () => this.load(m.shortTrack, this.ingest, this.shortTrackPlan()),
      traced10: () => this.load(m.traced10, this.stand.traced.traced10, this.trackPlan()),
      traced100: () => this.load(m.traced100, this.stand.traced.traced100, this.trackPlan()),
      traced0: () => this.load(m.traced0, this.stand.traced.traced0, this.trackPlan()),
      phases10: () => this.phases(m.phases10),
      untraced: () => this.load(m.untraced, this.stand.untraced, this.trackPlan()),
      tracesOff: () => this.load(m.tracesOff, this.stand.tracesOff, this.trackPlan()),
      bare: () => this.load(m.bare, this.bare, this.trackPlan()),
      bareFastify: () => this.load(m.bareFastify, this.bareFastify, this.trackPlan()),
      bareKafka: () => this.load(m.bareKafka, this.bareKafka, this.trackPlan()),
    };
    for (let round = 1; round <= this.settings.rounds; round += 1) {
      progress(`round ${round}/${this.settings.rounds}`);
      if (round > 1) await this.freshTraced();
      // Swapping places every round keeps a drift of the shared machine from favouring a side.
      const order: (keyof typeof runs)[] = odd(round)
        ? [
            'track',
            'traced10',
            'untraced',
            'tracesOff',
            'traced0',
            'phases10',
            'traced100',
            'shortTrack',
            'bare',
            'bareFastify',
          ]
        : [
            'bareFastify',
            'bare',
            'shortTrack',
            'traced100',
            'phases10',
            'traced0',
            'tracesOff',
            'untraced',
            'traced10',
            'track',
          ];
      order.splice(odd(round) ? order.length : 0, 0, 'bareKafka');
      order.push(...(odd(round) ? (['batch', 'perf'] as const) : (['perf', 'batch'] as const)));
      for (const name of order) await runs[name]();
    }
    return m;
  }

  /** (c): open loop at `rate`, ingest and the bare server alternately. */
  private async measureAtRate(
    rate: number,
  ): Promise<Pick<Measurements, 'trackAtHalf' | 'bareAtHalf'>> {
    const trackAtHalf = series(`ingest /v1/track @ ${count(rate)}/s`, 'requests/s');
    const bareAtHalf = series(`bare node:http @ ${count(rate)}/s`, 'requests/s');
    const plan = { ...this.trackPlan(), ratePerSecond: rate };
    for (let round = 1; round <= this.settings.rounds; round += 1) {
      progress(`latency round ${round}/${this.settings.rounds} at ${count(rate)} requests/s`);
      const pair = [
        () => this.load(trackAtHalf, this.ingest, plan),
        () => this.load(bareAtHalf, this.bare, plan),
      ];
      for (const run of round % 2 === 1 ? pair : pair.reverse()) await run();
    }
    return { trackAtHalf, bareAtHalf };
  }

  private trackPlan(): LoadPlan {
    return {
      path: '/v1/track',
      bodies: this.trackBodies,
      eventsPerRequest: 1,
      connections: this.settings.trackConnections,
      warmupMs: this.settings.warmupSeconds * 1000,
      durationMs: this.settings.seconds * 1000,
    };
  }

  /** A track call as Segment's browser library posts it: short route, text/plain, Origin. */
  private shortTrackPlan(): LoadPlan {
    return {
      ...this.trackPlan(),
      path: '/v1/t',
      contentType: 'text/plain',
      headers: { Origin: PAGE_ORIGIN },
    };
  }

  private batchPlan(): LoadPlan {
    return {
      ...this.trackPlan(),
      path: '/v1/batch',
      bodies: [this.batchBody],
      eventsPerRequest: this.settings.batchCalls,
      connections: this.settings.batchConnections,
    };
  }

  /** A phases10 run: its rate, and the CPU a request of its whole phases in the window. */
  private async phases(into: Series): Promise<void> {
    const phased = this.stand.phased;
    const window = await this.load(into, phased?.target, this.trackPlan());
    const costs = phased && requestCosts(phased.phases, window);
    if (costs) this.phaseRuns.push(costs);
    else
      this.warnings.push(`${into.label}, run ${into.samples.length}: no whole phase of each kind`);
  }

  /** Runs the load once; returns the measured window (wall-clock epoch ms). */
  private async load(
    into: Series,
    target: Target | undefined,
    plan: LoadPlan,
  ): Promise<{ from: number; to: number }> {
    if (!target) throw new Error('the stand is not set up');
    const brokerPid = this.settings.perf.brokerPid;
    const run = await runLoad(this.supervisor, target, plan, this.stand.writeKey, brokerPid);
    this.stand.ensureRunning();
    into.samples.push(run.sample);
    if (run.problem)
      this.warnings.push(`${into.label}, run ${into.samples.length}: ${run.problem}`);
    progress(
      `  ${into.label}: ${count(run.sample.value)} ${into.unit}, p99 ${run.sample.p99Ms} ms, ` +
        `${fixed(run.sample.stealCores ?? NaN, 2)} cores stolen`,
    );
    return run.window;
  }

  /** One ProducerPerformance run. */
  private async perf(into: Series): Promise<void> {
    const size = (this.recordSize as RecordSize).total;
    const topic = this.stand.perfTopic;
    const result = await producerPerformance(
      this.supervisor,
      this.settings.perf,
      topic,
      this.perfRecords,
      size,
    );
    into.samples.push({
      value: result.recordsPerSecond,
      brokerCores: result.brokerCores,
      clientCores: result.clientCores,
      machineCores: result.machineCores,
    });
    if (result.steadySeconds === 0) {
      this.warnings.push(
        `${into.label}, run ${into.samples.length}: ended within its first ` +
          `${PERF_WARMUP_SECONDS} s window; its whole-run rate is used`,
      );
    }
    progress(
      `  ${into.label}: ${count(result.recordsPerSecond)} records/s over the last ` +
        `${result.steadySeconds.toFixed(1)} s (${count(result.overallPerSecond)} over the ` +
        `whole run of ${count(result.records)} records)`,
    );
    // The next run is sized from this one, so its steady part lasts about `seconds`.
    const perfSeconds = PERF_WARMUP_SECONDS + this.settings.seconds;
    const next = result.recordsPerSecond * perfSeconds * PERF_RECORDS_SLACK;
    this.perfRecords = Math.max(PERF_MIN_RECORDS, Math.round(next));
  }

  /** The phases10 side's line: free of the spread between processes the other sides have. */
  private phaseLine(): string {
    const runs = this.phaseRuns;
    if (runs.length === 0) return 'ingest traces 10% switched on and off: no run had whole phases';
    const ratios = runs.map(phaseRatio);
    const us = (field: keyof PhaseCosts) => median(runs.map((r) => r[field])).toFixed(1);
    return (
      `ingest CPU/request unsampled ÷ sampled at 10%, phases of one process = ` +
      `${median(ratios).toFixed(2)} (${us('sampledUs')} µs a request sampled against ` +
      `${us('unsampledUs')}; per run ${ratios.map((r) => r.toFixed(2)).join(' ')})`
    );
  }

  private report(m: Measurements, halfRate: number): string {
    const s = this.settings;
    const size = this.recordSize as RecordSize;
    const paired = (a: Series, b: Series) =>
      a.samples.map((x, i) => x.value / (b.samples[i]?.value ?? NaN));
    const ratio = (a: Series, b: Series) => medianOf(a, 'value') / medianOf(b, 'value');
    /** `a` ÷ `b`, then `what` and the rounds' ratios in brackets. */
    const against = (a: Series, b: Series, what: string) =>
      `${ratio(a, b).toFixed(2)} (${what}; per round ` +
      `${paired(a, b)
        .map((r) => r.toFixed(2))
        .join(' ')})`;
    const context = (name: string, side: Series, what: string) =>
      `(b) for context: ${name} requests/s ÷ bare node:http requests/s = ` +
      against(side, m.bare, what);
    return [
      '',
      `Sluice ingest benchmark: medians of ${s.rounds} interleaved rounds, ${s.seconds} s each ` +
        `after ${s.warmupSeconds} s of warm-up`,
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ` +
        `Kafka ${kafkaVersion(s.perf.libsDir)}, ${s.partitions} partitions`,
      `calls of ${s.callBytes} B; /v1/track over ${s.trackConnections} connections; ` +
        `/v1/batch of ${s.batchCalls} calls over ${s.batchConnections} connections`,
      `ProducerPerformance: acks=all, records of ${size.total} B (a call record's value ` +
        `${size.value} + key ${size.key} + headers ${size.headers}); each run counted after its ` +
        `first ${PERF_WARMUP_SECONDS} s window (a fresh JVM warming up)`,
      'cores = CPU seconds per second in the measured window; client = the load tool or the ' +
        'ProducerPerformance JVM; machine = all processes and the kernel ' +
        `(${cpus().length} = all cores busy); ${STOLEN_MEANS}`,
      '',
      seriesTable([
        m.batch,
        m.perf,
        m.track,
        m.shortTrack,
        m.traced10,
        m.traced100,
        m.traced0,
        m.phases10,
        m.untraced,
        m.tracesOff,
        m.bare,
        m.bareFastify,
        m.bareKafka,
        m.trackAtHalf,
        m.bareAtHalf,
      ]),
      '',
      ratioTable([
        {
          label: '(a) /v1/batch events/s ÷ ProducerPerformance records/s',
          value: ratio(m.batch, m.perf),
          goal: GOAL_BATCH,
          perRound: paired(m.batch, m.perf),
        },
        {
          label: '(b) /v1/track requests/s ÷ bare node:http requests/s',
          value: ratio(m.track, m.bare),
          goal: GOAL_TRACK,
          perRound: paired(m.track, m.bare),
        },
      ]),
      `/v1/t (text/plain, with Origin) requests/s ÷ /v1/track requests/s = ` +
        against(m.shortTrack, m.track, "the browser library's route and CORS against the long one"),
      'traces: the ingests of the traces sides start together, anew each round, and warm up ' +
        'alike; their "traces off" is the one started with them, not the main ingest',
      ...(['traced10', 'traced100'] as const).map(
        (side) =>
          `${m[side].label} requests/s ÷ traces off = ` +
          against(m[side], m.tracesOff, 'goal at 10%: 0.95 or more'),
      ),
      `${m.traced0.label} requests/s ÷ traces off = ` +
        against(m.traced0, m.tracesOff, 'traces on, nothing sampled: what every request pays'),
      this.phaseLine(),
      `ingest /v1/track requests/s, traces off ÷ built without tracing = ` +
        against(m.tracesOff, m.untraced, 'goal: 0.98 or more'),
      `ingest /v1/track requests/s, the main ingest ÷ traces off with the traced ones = ` +
        against(m.track, m.tracesOff, 'the same settings; the main one also serves the batch runs'),
      context('bare Fastify', m.bareFastify, 'the HTTP framework alone, before any work'),
      context(
        'bare node:http + Kafka',
        m.bareKafka,
        "each call parsed, serialized and produced through ingest's producer, nothing else",
      ),
      `(c) /v1/track p99 at half the maximum (${count(halfRate)} requests/s, open loop): ` +
        `${medianOf(m.trackAtHalf, 'p99Ms').toFixed(1)} ms (bare node:http at the same rate: ` +
        `${medianOf(m.bareAtHalf, 'p99Ms').toFixed(1)} ms; no numeric goal set)`,
      ...this.warnings.map((w) => `warning: ${w}`),
    ].join('\n');
  }
}

function kafkaVersion(libsDir: string): string {
  const jar = readdirSync(libsDir).find((name) => /^kafka-clients-.+\.jar$/.test(name));
  return jar ? jar.replace(/^kafka-clients-(.+)\.jar$/, '$1') : 'unknown';
}

runBench(new IngestBench(readSettings(process.env)));
