/**
 * The ingest benchmark (DESIGN.md section 8): ratios of the ingest app to physical limits
 * measured on the same machine in the same run, A/B runs interleaved, medians printed.
 *
 *   (a) `/v1/batch` acknowledged events/s ÷ Kafka's ProducerPerformance records/s (same
 *       record size, acks=all)
 *   (b) `/v1/track` requests/s ÷ a bare `node:http` server that parses the same body
 *   (c) `/v1/track` p99 latency at half the measured maximum rate (open loop)
 *
 * Run through `npm run bench:ingest` (bench/ingest.sh builds, starts the services, migrates).
 */
import { readdirSync } from 'node:fs';
import { cpus } from 'node:os';

import { batchBody, trackBodies } from './bodies.mts';
import { type PerfTool, probeRecordSize, producerPerformance, type RecordSize } from './kafka.mts';
import { Supervisor } from './processes.mts';
import { count, medianOf, ratioTable, type Series, seriesTable } from './report.mts';
import { type LoadPlan, runLoad } from './runs.mts';
import { Stand, type Target } from './stand.mts';

/** Settings, from BENCH_* variables (see bench/README.md). */
interface Settings {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly trackConnections: number;
  readonly batchConnections: number;
  readonly batchCalls: number;
  readonly callBytes: number;
  readonly partitions: number;
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly perf: PerfTool;
}

const GOAL_BATCH = 0.35;
const GOAL_TRACK = 0.7;
/** Distinct `/v1/track` bodies (one user each), so records spread over the partitions. */
const TRACK_BODIES = 16;
/** ProducerPerformance records in the calibration run; later runs aim at `seconds`. */
const PERF_CALIBRATION_RECORDS = 100_000;

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`${name} must be a whole number from ${min} to ${max}`);
    }
    return value;
  };
  const required = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not set; run through npm run bench:ingest`);
    return value;
  };
  const brokers = required('KAFKA_BROKERS');
  const brokerPid = Number(env.BENCH_KAFKA_PID ?? '');
  return {
    rounds: number('BENCH_ROUNDS', 3, 1, 20),
    seconds: number('BENCH_SECONDS', 6, 1, 120),
    warmupSeconds: number('BENCH_WARMUP_SECONDS', 1, 0, 60),
    trackConnections: number('BENCH_CONNECTIONS', 32, 1, 1_000),
    batchConnections: number('BENCH_BATCH_CONNECTIONS', 8, 1, 1_000),
    batchCalls: number('BENCH_BATCH_CALLS', 100, 1, 400),
    callBytes: number('BENCH_CALL_BYTES', 1_024, 400, 4_096),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 6, 1, 100),
    brokers,
    databaseUrl: required('DATABASE_URL'),
    perf: {
      libsDir: required('BENCH_KAFKA_LIBS'),
      log4jConfig: required('BENCH_KAFKA_LOG4J'),
      brokers,
      brokerPid: Number.isInteger(brokerPid) && brokerPid > 0 ? brokerPid : undefined,
    },
  };
}

class IngestBench {
  readonly supervisor = new Supervisor();
  readonly stand: Stand;
  private readonly trackBodies: string[];
  private readonly batchBody: string;
  private readonly warnings: string[] = [];
  private recordSize?: RecordSize;
  private perfRecords = PERF_CALIBRATION_RECORDS;
  private halfRate = NaN;

  private readonly settings: Settings;

  constructor(settings: Settings) {
    this.settings = settings;
    this.stand = new Stand(settings, this.supervisor);
    this.trackBodies = trackBodies(TRACK_BODIES, settings.callBytes);
    this.batchBody = batchBody(settings.batchCalls, settings.callBytes);
  }

  async run(): Promise<string> {
    const s = this.settings;
    progress(`setting up (topic prefix ${this.stand.prefix})`);
    await this.stand.setUp();
    const ingest = this.stand.ingest as Target;
    const bare = this.stand.bare as Target;
    const series = {
      batch: { label: 'ingest /v1/batch', unit: 'events/s', samples: [] } as Series,
      perf: { label: 'ProducerPerformance', unit: 'records/s', samples: [] } as Series,
      track: { label: 'ingest /v1/track', unit: 'requests/s', samples: [] } as Series,
      bare: { label: 'bare node:http', unit: 'requests/s', samples: [] } as Series,
    };
    const runs = {
      batch: () => this.load(series.batch, ingest, this.batchPlan()),
      perf: () => this.perf(series.perf),
      track: () => this.load(series.track, ingest, this.trackPlan()),
      bare: () => this.load(series.bare, bare, this.trackPlan()),
    };
    await this.warmUp(ingest, bare);
    for (let round = 1; round <= s.rounds; round += 1) {
      progress(`round ${round}/${s.rounds}`);
      // A and B swap places every round, so a drift of the machine favours neither.
      const order =
        round % 2 === 1 ? ['track', 'bare', 'batch', 'perf'] : ['bare', 'track', 'perf', 'batch'];
      for (const name of order) await runs[name as keyof typeof runs]();
    }
    const halfRate = Math.round(medianOf(series.track, 'value') / 2);
    this.halfRate = halfRate;
    const atHalf = {
      track: {
        label: `ingest /v1/track @ ${count(halfRate)}/s`,
        unit: 'requests/s',
        samples: [],
      } as Series,
      bare: {
        label: `bare node:http @ ${count(halfRate)}/s`,
        unit: 'requests/s',
        samples: [],
      } as Series,
    };
    for (let round = 1; round <= s.rounds; round += 1) {
      progress(`latency round ${round}/${s.rounds} at ${count(halfRate)} requests/s`);
      const plan = { ...this.trackPlan(), ratePerSecond: halfRate };
      const pair = [
        () => this.load(atHalf.track, ingest, plan),
        () => this.load(atHalf.bare, bare, plan),
      ];
      for (const run of round % 2 === 1 ? pair : pair.reverse()) await run();
    }
    return this.report([
      series.batch,
      series.perf,
      series.track,
      series.bare,
      atHalf.track,
      atHalf.bare,
    ]);
  }

  private async warmUp(ingest: Target, bare: Target): Promise<void> {
    progress('warming up (not counted)');
    const short = { warmupMs: 0, durationMs: Math.min(3_000, this.settings.seconds * 1000) };
    const scratch = (label: string, unit: string): Series => ({ label, unit, samples: [] });
    // The batch goes first: the record-size probe reads the first records of the calls topic.
    await this.load(scratch('warm-up /v1/batch', 'events/s'), ingest, {
      ...this.batchPlan(),
      ...short,
    });
    this.recordSize = await probeRecordSize(
      this.stand.kafka,
      this.stand.callsTopic,
      `${this.stand.prefix}bench-probe`,
    );
    const calibration = await this.perf(scratch('warm-up ProducerPerformance', 'records/s'));
    this.perfRecords = Math.max(10_000, Math.round(calibration * this.settings.seconds));
    await this.load(scratch('warm-up /v1/track', 'requests/s'), ingest, {
      ...this.trackPlan(),
      ...short,
    });
    await this.load(scratch('warm-up bare node:http', 'requests/s'), bare, {
      ...this.trackPlan(),
      ...short,
    });
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

  private batchPlan(): LoadPlan {
    return {
      ...this.trackPlan(),
      path: '/v1/batch',
      bodies: [this.batchBody],
      eventsPerRequest: this.settings.batchCalls,
      connections: this.settings.batchConnections,
    };
  }

  private async load(series: Series, target: Target, plan: LoadPlan): Promise<void> {
    const { sample, problem } = await runLoad(
      this.supervisor,
      target,
      plan,
      this.stand.writeKey,
      this.settings.perf.brokerPid,
    );
    this.stand.ensureRunning();
    series.samples.push(sample);
    if (problem) this.warnings.push(`${series.label}, run ${series.samples.length}: ${problem}`);
    progress(`  ${series.label}: ${count(sample.value)} ${series.unit}, p99 ${sample.p99Ms} ms`);
  }

  /** One ProducerPerformance run; returns its records/s. */
  private async perf(series: Series): Promise<number> {
    const size = this.recordSize as RecordSize;
    const result = await producerPerformance(
      this.supervisor,
      this.settings.perf,
      this.stand.perfTopic,
      this.perfRecords,
      size.total,
    );
    series.samples.push({
      value: result.recordsPerSecond,
      p99Ms: result.p99Ms,
      brokerCores: result.brokerCores,
      clientCores: result.clientCores,
    });
    progress(
      `  ${series.label}: ${count(result.recordsPerSecond)} records/s (${count(result.records)} records)`,
    );
    return result.recordsPerSecond;
  }

  private report(all: Series[]): string {
    const s = this.settings;
    const [batch, perf, track, bare, trackAtHalf, bareAtHalf] = all;
    const size = this.recordSize as RecordSize;
    const paired = (a: Series, b: Series) =>
      a.samples.map((x, i) => x.value / (b.samples[i]?.value ?? NaN));
    const p99 = medianOf(trackAtHalf, 'p99Ms');
    const lines = [
      '',
      `Sluice ingest benchmark: medians of ${s.rounds} interleaved rounds, ${s.seconds} s each after ${s.warmupSeconds} s of warm-up`,
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, Kafka ${kafkaVersion(s.perf.libsDir)}, ${s.partitions} partitions`,
      `calls of ${s.callBytes} B; /v1/track over ${s.trackConnections} connections; /v1/batch of ${s.batchCalls} calls over ${s.batchConnections} connections`,
      `ProducerPerformance: acks=all, ${count(this.perfRecords)} records of ${size.total} B (a call record's value ${size.value} + key ${size.key} + headers ${size.headers})`,
      `cores = CPU seconds per second in the measured window; client = the load tool, or the ProducerPerformance JVM over its whole run`,
      '',
      seriesTable(all),
      '',
      ratioTable([
        {
          label: '(a) /v1/batch events/s ÷ ProducerPerformance records/s',
          value: medianOf(batch, 'value') / medianOf(perf, 'value'),
          goal: GOAL_BATCH,
          perRound: paired(batch, perf),
        },
        {
          label: '(b) /v1/track requests/s ÷ bare node:http requests/s',
          value: medianOf(track, 'value') / medianOf(bare, 'value'),
          goal: GOAL_TRACK,
          perRound: paired(track, bare),
        },
      ]),
      `(c) /v1/track p99 at half the maximum (${count(this.halfRate)} requests/s, open loop): ${p99.toFixed(1)} ms ` +
        `(bare node:http at the same rate: ${medianOf(bareAtHalf, 'p99Ms').toFixed(1)} ms; no numeric goal set)`,
      ...this.warnings.map((w) => `warning: ${w}`),
    ];
    return lines.join('\n');
  }
}

function kafkaVersion(libsDir: string): string {
  const jar = readdirSync(libsDir).find((name) => /^kafka-clients-.+\.jar$/.test(name));
  return jar ? jar.replace(/^kafka-clients-(.+)\.jar$/, '$1') : 'unknown';
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function main(): Promise<void> {
  const bench = new IngestBench(readSettings(process.env));
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) {
        bench.supervisor.killAllNow();
        process.exit(130);
      }
      interrupted = true;
      progress(`${signal}: stopping and cleaning up (again to stop at once)`);
      void bench.stand.tearDown().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => bench.supervisor.killAllNow());
  const started = Date.now();
  try {
    const report = await bench.run();
    progress('cleaning up');
    await bench.stand.tearDown();
    process.stdout.write(`${report}\nfinished in ${Math.round((Date.now() - started) / 1000)} s\n`);
  } catch (error) {
    if (interrupted) return;
    await bench.stand.tearDown();
    throw error;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[bench] failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
