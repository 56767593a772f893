/** Settings, samples and the printed report of the router benchmark (see bench/ROUTER.md). */
import { existsSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

import { envReader } from './common.mts';
import { count, fixed, median, table } from './report.mts';
import type { RecordShape } from './router-stand.mts';

const GOAL = 0.5;
/** The rate with de-duplication on, at least this share of the rate with it off */
const DEDUP_GOAL = 0.9;
/** The rate with the filtered destinations beside the plain one, at least this share of without */
const FILTERS_GOAL = 0.7;

/** The benchmark's settings, from the environment (see bench/ROUTER.md). */
export interface Settings {
  /** Measured rounds, each one run of either side. */
  readonly rounds: number;
  /** Rounds before those, not counted. */
  readonly warmupRounds: number;
  /** Call records pre-filled, and moved by each run. */
  readonly records: number;
  /** Bytes of one call record's value. */
  readonly callBytes: number;
  /** Distinct user keys among the records. */
  readonly users: number;
  /** Partitions of every topic. */
  readonly partitions: number;
  /** Partitions each side handles at once. */
  readonly partitionsConcurrently: number;
  /** The router's calls in flight per partition. */
  readonly maxInFlight: number;
  readonly brokers: string;
  readonly databaseUrl: string;
  readonly brokerPid?: number;
  readonly kafkaLibs?: string;
  /** Extra Node options for the router and the bare loop (e.g. `--cpu-prof`). */
  readonly nodeArgs: readonly string[];
}

/** One measured run: records moved in the window between the first and the last delivery. */
export interface Sample {
  readonly perSecond: number;
  readonly seconds: number;
  readonly processCores?: number;
  readonly brokerCores?: number;
  readonly machineCores?: number;
  readonly cpuUsPerRecord?: number;
}

/** A side's runs, one sample per round. */
export interface Series {
  readonly label: string;
  readonly samples: Sample[];
}

/** Reads the settings; throws naming a variable that is out of range. */
export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number, required } = envReader(env, 'bench:router');
  const brokerPid = Number(env.BENCH_KAFKA_PID ?? '');
  return {
    rounds: number('BENCH_ROUNDS', 3, 1, 20),
    warmupRounds: number('BENCH_WARMUP_ROUNDS', 1, 0, 5),
    records: number('BENCH_RECORDS', 200_000, 1_000, 5_000_000),
    callBytes: number('BENCH_CALL_BYTES', 1_024, 600, 16_384),
    users: number('BENCH_USERS', 10_000, 1, 10_000_000),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 6, 1, 100),
    partitionsConcurrently: number('ROUTER_PARTITIONS_CONCURRENTLY', 3, 1, 64),
    maxInFlight: number('ROUTER_MAX_IN_FLIGHT', 64, 1, 5_000),
    brokers: required('KAFKA_BROKERS'),
    databaseUrl: required('DATABASE_URL'),
    brokerPid: Number.isInteger(brokerPid) && brokerPid > 0 ? brokerPid : undefined,
    kafkaLibs: env.BENCH_KAFKA_LIBS,
    nodeArgs: (env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  };
}

/** What the report is made of. */
export interface ReportInput {
  readonly settings: Settings;
  readonly router: Series;
  /** The router with its de-duplication off (ROUTER_DEDUP_WINDOW_SECONDS=0). */
  readonly routerNoDedup: Series;
  /** The router with the source's filtered destinations enabled beside its plain one. */
  readonly routerFilters: Series;
  readonly filteredDestinations: number;
  readonly bare: Series;
  readonly shape?: RecordShape;
  readonly fillPerSecond: number;
  readonly warnings: readonly string[];
  readonly pollMs: number;
}

/** The report: set-up, the measurements table, the ratio with its goal, warnings. */
export function routerReport(input: ReportInput): string {
  const {
    settings: s,
    router,
    routerNoDedup,
    routerFilters,
    filteredDestinations,
    bare,
    shape,
    fillPerSecond,
    warnings,
    pollMs,
  } = input;
  const value = (series: Series) => median(series.samples.map((x) => x.perSecond));
  const ratio = value(router) / value(bare);
  const perRound = (a: Series, b: Series) =>
    a.samples.map((x, i) => x.perSecond / (b.samples[i]?.perSecond ?? NaN));
  const dedupRatio = value(router) / value(routerNoDedup);
  const filtersRatio = value(routerFilters) / value(router);
  const cpu = (series: Series) => median(series.samples.map((x) => x.cpuUsPerRecord ?? NaN));
  const filterUs = (cpu(routerFilters) - cpu(router)) / filteredDestinations;
  const rows = [router, routerNoDedup, routerFilters, bare].map((series) => {
    const m = (field: keyof Sample) => median(series.samples.map((x) => x[field] ?? NaN));
    return [
      series.label,
      count(value(series)),
      series.samples.map((x) => count(x.perSecond)).join(' '),
      fixed(m('seconds'), 2),
      fixed(m('processCores'), 2),
      fixed(m('brokerCores'), 2),
      fixed(m('machineCores'), 2),
      fixed(m('cpuUsPerRecord'), 1),
    ];
  });
  return [
    '',
    `Sluice router benchmark: medians of ${s.rounds} interleaved rounds ` +
      `(after ${s.warmupRounds} warm-up round${s.warmupRounds === 1 ? '' : 's'}), ` +
      `${count(s.records)} calls per run`,
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ` +
      `Kafka ${kafkaVersion(s.kafkaLibs)}, ${s.partitions} partitions per topic`,
    `calls: value ${shape?.value ?? '-'} B + key ${shape?.key ?? '-'} B + headers ` +
      `${shape?.headers ?? '-'} B (as ingest writes them), ${count(s.users)} users; pre-filled ` +
      `at ${count(fillPerSecond)} records/s`,
    `both sides: ${s.partitionsConcurrently} partitions concurrently, a fresh consumer group ` +
      `per run, idempotent producer with acks=all, offsets committed after the acks; router: ` +
      `${s.maxInFlight} calls in flight per partition`,
    'rate = records produced between the first and the last delivery seen (start-up and ' +
      `group join excluded; end offsets read every ${pollMs} ms)`,
    'cores = CPU seconds per second in that window (process = the router or the bare loop; ' +
      `machine = everything, the kernel included; ${cpus().length} = all cores busy)`,
    '',
    table([
      [
        'measurement',
        'median',
        'rounds',
        'seconds',
        'cores: process',
        'broker',
        'machine',
        'CPU µs/record',
      ],
      ...rows,
    ]),
    '',
    table([
      ['ratio (of medians)', 'value', 'goal', '', 'per round'],
      [
        'router calls/s ÷ bare kafkajs loop records/s',
        fixed(ratio, 2),
        `>= ${fixed(GOAL, 2)}`,
        ratio >= GOAL ? 'meets goal' : 'BELOW GOAL',
        perRound(router, bare)
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      [
        'router de-duplication on ÷ off (calls/s)',
        fixed(dedupRatio, 2),
        `>= ${fixed(DEDUP_GOAL, 2)}`,
        dedupRatio >= DEDUP_GOAL ? 'meets goal' : 'BELOW GOAL',
        perRound(router, routerNoDedup)
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      [
        `router with ${filteredDestinations} filtered destinations ÷ without (calls/s)`,
        fixed(filtersRatio, 2),
        `>= ${fixed(FILTERS_GOAL, 2)}`,
        filtersRatio >= FILTERS_GOAL ? 'meets goal' : 'BELOW GOAL',
        perRound(routerFilters, router)
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
    ]),
    `a filter's cost: ${fixed(filterUs, 2)} µs of router CPU per call per filtered destination ` +
      `(CPU µs/record with them minus without, ÷ ${filteredDestinations}; each filter: type, ` +
      'then three comparisons over the call body, which the router parses once per call)',
    ...warnings.map((w) => `warning: ${w}`),
  ].join('\n');
}

function kafkaVersion(libsDir: string | undefined): string {
  if (!libsDir || !existsSync(libsDir)) return 'unknown';
  const jar = readdirSync(libsDir).find((name) => /^kafka-clients-.+\.jar$/.test(name));
  return jar ? jar.replace(/^kafka-clients-(.+)\.jar$/, '$1') : 'unknown';
}
