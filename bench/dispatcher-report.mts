/** Settings, samples and the printed report of the dispatcher benchmark (see bench/DISPATCHER.md). */
import { cpus } from 'node:os';

import { envReader } from './common.mts';
import { HEALTHY_DESTINATIONS } from './dispatcher-stand.mts';
import { type PhaseCosts, phaseRatio } from './phase-costs.mts';
import { STOLEN_MEANS } from './processes.mts';
import { count, fixed, median, table } from './report.mts';

/** The goals of docs/performance.md and issue 5. */
const GOAL = {
  rate: 0.6,
  cpu: 2.0,
  isolation: 0.9,
  idlePercent: 1,
  ledger: 0.9,
  // Issue 32: batches of 100 deliver at least 10x the calls a second, at a tenth of the CPU each.
  batchRate: 10,
  batchCpu: 0.1,
  /** Deliveries/s with traces on at 10% of new traces, against traces off. */
  traced10: 0.95,
  /** Deliveries/s with traces off, against a build without tracing. */
  untraced: 0.98,
} as const;

/** The sides of a round (see bench/DISPATCHER.md); `BENCH_SIDES` may run fewer. */
export const SIDES = [
  'dispatcher',
  'ledgerOff',
  'bare',
  'healthy',
  'failing',
  'traced10',
  'traced100',
  'traced0',
  'phases10',
  'untraced',
  'batch100',
  'batch1000',
] as const;
export type Side = (typeof SIDES)[number];

/** The batching sides' calls a request (`batching.maxCalls` of the healthy destination). */
export const BATCH_SIDES: Partial<Record<Side, number>> = { batch100: 100, batch1000: 1_000 };

/** The benchmark's settings, from the environment (see bench/DISPATCHER.md). */
export interface Settings {
  readonly rounds: number;
  /** Delivery records per run of (a) and (b), and requests per run of the bare loop. */
  readonly deliveries: number;
  /** Calls per run of a batching side (many more: a batching run is several times faster). */
  readonly batchDeliveries: number;
  /** Bytes of one delivery's body. */
  readonly bodyBytes: number;
  readonly users: number;
  /** Share of (b)'s deliveries that go to the other destination, in percent. */
  readonly otherPercent: number;
  readonly partitions: number;
  /** DISPATCHER_CONNECTIONS_PER_ORIGIN, also the bare loop's connections. */
  readonly connections: number;
  /** DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION, also the bare loop's requests in flight. */
  readonly inFlight: number;
  /** DISPATCHER_REQUEST_TIMEOUT_MS. */
  readonly requestTimeoutMs: number;
  /** DISPATCHER_RETRY_DELAYS. */
  readonly retryDelays: string;
  /** (c): records per retry tier, seconds to settle, seconds measured. */
  readonly pausedPerTier: number;
  readonly idleSettleSeconds: number;
  readonly idleSeconds: number;
  readonly brokers: string;
  readonly databaseUrl: string;
  /** Extra Node options for the dispatcher and the bare loop (e.g. `--cpu-prof`). */
  readonly nodeArgs: readonly string[];
  /** The sides each round runs (all by default; fewer for a quick look at some). */
  readonly sides: readonly Side[];
}

/** A rate measured between the 10% and the 90% marks of a run's requests at the sink. */
export interface Sample {
  readonly perSecond: number;
  readonly seconds: number;
  /** CPU of the process measured (the dispatcher or the bare loop), in cores. */
  readonly processCores?: number;
  readonly sinkCores?: number;
  readonly machineCores?: number;
  /** CPU the hypervisor kept from this machine (its steal time), in cores. */
  readonly stealCores?: number;
  readonly cpuUsPerRequest?: number;
  /**
   * The `phases10` side: the process's CPU a delivery in its sampled and its unsampled phases
   * (µs; phases wholly inside the window).
   */
  readonly phases?: PhaseCosts;
}

/** One side's runs, one sample per round. */
export interface Series {
  readonly label: string;
  readonly samples: Sample[];
}

/** (c): the dispatcher's CPU while only paused retry partitions exist. */
export interface IdleSample {
  readonly seconds: number;
  readonly processCores?: number;
  readonly pausedRecords: number;
  readonly tiers: number;
}

export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const { number, required } = envReader(env, 'bench:dispatcher');
  return {
    rounds: number('BENCH_ROUNDS', 3, 1, 20),
    deliveries: number('BENCH_DELIVERIES', 60_000, 1_000, 1_000_000),
    batchDeliveries: number('BENCH_BATCH_DELIVERIES', 1_000_000, 1_000, 5_000_000),
    bodyBytes: number('BENCH_BODY_BYTES', 700, 650, 16_384),
    users: number('BENCH_USERS', 10_000, 1, 10_000_000),
    otherPercent: number('BENCH_OTHER_PERCENT', 10, 1, 50),
    partitions: number('KAFKA_TOPIC_PARTITIONS', 6, 1, 100),
    connections: number('DISPATCHER_CONNECTIONS_PER_ORIGIN', 64, 1, 10_000),
    inFlight: number('DISPATCHER_MAX_IN_FLIGHT_PER_DESTINATION', 64, 1, 10_000),
    requestTimeoutMs: number('DISPATCHER_REQUEST_TIMEOUT_MS', 5_000, 100, 120_000),
    retryDelays: env.DISPATCHER_RETRY_DELAYS || '10s,1m,5m,20m,1h',
    pausedPerTier: number('BENCH_PAUSED_PER_TIER', 600, 1, 100_000),
    idleSettleSeconds: number('BENCH_IDLE_SETTLE_SECONDS', 10, 0, 300),
    idleSeconds: number('BENCH_IDLE_SECONDS', 20, 1, 600),
    brokers: required('KAFKA_BROKERS'),
    databaseUrl: required('DATABASE_URL'),
    nodeArgs: (env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    sides: readSides(env.BENCH_SIDES),
  };
}

/** `BENCH_SIDES`: a comma-separated list of sides, all when empty. */
function readSides(text: string | undefined): readonly Side[] {
  const names = (text ?? '').split(',').filter(Boolean);
  if (names.length === 0) return SIDES;
  const unknown = names.filter((name) => !(SIDES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `bench:dispatcher: BENCH_SIDES takes ${SIDES.join(', ')}; not ${unknown.join(', ')}`,
    );
  }
  return names as Side[];
}

/** What the report is made of. */
export interface ReportInput {
  readonly settings: Settings;
  /** (a) with DISPATCHER_LEDGER_SUCCESS_SAMPLE 1 and 0. */
  readonly dispatcher: Series;
  readonly ledgerOff: Series;
  readonly bare: Series;
  /** (a) ledger on, with traces on at 10% and at 100% of new traces (exported to a local sink). */
  readonly traced10: Series;
  readonly traced100: Series;
  /** Traces on, no new trace sampled: what an unsampled delivery alone costs. */
  readonly traced0: Series;
  /** Traces on at 10%, sampling switched on and off every 2 s in one process. */
  readonly phases10: Series;
  /** The same dispatcher built without tracing (bench/untraced-build.mts). */
  readonly untraced: Series;
  /** The admin app's ledger writer draining one ledger-on run's outcomes (rows/s, CPU/row). */
  readonly writer?: Sample;
  readonly healthy: Series;
  readonly failing: Series;
  /** (a) with the healthy destination batching 100 and 1,000 calls a request (ledger on). */
  readonly batch100: Series;
  readonly batch1000: Series;
  /** (c) before the tiers were filled: nothing at all to consume (context, no goal). */
  readonly empty: IdleSample;
  readonly idle: IdleSample;
  readonly signatures: { readonly checked: number; readonly bad: number };
  readonly fillPerSecond: number;
  readonly warnings: readonly string[];
  readonly pollMs: number;
}

/** A sample's measured numbers. */
type Field = Exclude<keyof Sample, 'phases'>;

const value = (series: Series, field: Field = 'perSecond') =>
  median(series.samples.map((x) => x[field] ?? NaN));

function rows(series: readonly Series[]): string[][] {
  return series.map((s) => [
    s.label,
    count(value(s)),
    s.samples.map((x) => count(x.perSecond)).join(' '),
    fixed(value(s, 'seconds'), 2),
    fixed(value(s, 'processCores'), 2),
    fixed(value(s, 'sinkCores'), 2),
    fixed(value(s, 'machineCores'), 2),
    fixed(value(s, 'stealCores'), 2),
    fixed(value(s, 'cpuUsPerRequest'), 1),
  ]);
}

/** Each round's unsampled phases' CPU a delivery ÷ its sampled phases'. */
function phaseRatios(series: Series): number[] {
  return series.samples.map((x) => (x.phases ? phaseRatio(x.phases) : NaN));
}

function paired(a: Series, b: Series, field: Field): number[] {
  return a.samples.map((x, i) => (x[field] ?? NaN) / (b.samples[i]?.[field] ?? NaN));
}

function ratioRow(label: string, ratio: number, goal: string, met: boolean, perRound: number[]) {
  return [
    label,
    fixed(ratio, 2),
    goal,
    met ? 'meets goal' : 'MISSES GOAL',
    perRound.map((r) => fixed(r, 2)).join(' '),
  ];
}

/** The ledger's lines: CPU per delivery on and off, and whether its writer keeps up. */
function ledgerLines(input: ReportInput): string[] {
  const on = value(input.dispatcher, 'cpuUsPerRequest');
  const off = value(input.ledgerOff, 'cpuUsPerRequest');
  const lines = [
    `ledger: dispatcher CPU per delivery ${fixed(on, 1)} µs with an outcome per delivery ` +
      `(gathered into shared records), ${fixed(off, 1)} µs without ` +
      `(DISPATCHER_LEDGER_SUCCESS_SAMPLE 1 / 0): ${fixed(on - off, 1)} µs per outcome`,
  ];
  const { writer } = input;
  if (!writer) return lines;
  const keepUp = writer.perSecond / value(input.dispatcher);
  const behind = value(input.dispatcher) - writer.perSecond;
  return [
    ...lines,
    `ledger writer (admin app, one ledger-on run's outcomes): ${count(writer.perSecond)} ` +
      `rows/s, ${fixed(writer.processCores ?? NaN, 2)} cores, ` +
      `${fixed(writer.cpuUsPerRequest ?? NaN, 1)} µs CPU/row; ÷ dispatcher deliveries/s ` +
      `(ledger on) = ${fixed(keepUp, 2)}: ` +
      (keepUp >= 1
        ? 'keeps up at the full rate'
        : `at the full rate its lag grows by ${count(behind)} records/s; a ` +
          `DISPATCHER_LEDGER_SUCCESS_SAMPLE up to ${fixed(keepUp, 2)} keeps up`),
  ];
}

/** The report: set-up, the measurements, the ratios against their goals, warnings. */
export function dispatcherReport(input: ReportInput): string {
  const { settings: s, dispatcher, ledgerOff, bare, healthy, failing, idle, empty } = input;
  const { traced10, traced100, traced0, phases10, untraced } = input;
  const rate = value(dispatcher) / value(bare);
  const ledger = value(dispatcher) / value(ledgerOff);
  const cpu = value(dispatcher, 'cpuUsPerRequest') / value(bare, 'cpuUsPerRequest');
  const isolation = value(failing) / value(healthy);
  const idlePercent = (idle.processCores ?? NaN) * 100;
  const otherEvery = Math.round(100 / s.otherPercent);
  return [
    '',
    `Sluice dispatcher benchmark: medians of ${s.rounds} interleaved rounds, ` +
      `${count(s.deliveries)} deliveries per run (${count(s.batchDeliveries)} calls per batching run)`,
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ` +
      `${s.partitions} partitions per topic; pre-filled at ${count(input.fillPerSecond)} records/s`,
    `deliveries: a ${s.bodyBytes}-byte track body, key destinationId:userKey (${count(s.users)} ` +
      "users), the router's four headers; signed (HMAC-SHA1), one webhook per destination",
    `dispatcher: ${s.connections} connections per origin, ${s.inFlight} in flight per ` +
      `destination, request timeout ${s.requestTimeoutMs} ms, retry tiers ${s.retryDelays}; ` +
      `bare undici loop: Pool with ${s.connections} connections, ${s.inFlight} requests in flight`,
    'rate = requests the sink received between the 10% and the 90% marks of the run, divided ' +
      `by that time (start-up excluded; the sink's counts read every ${input.pollMs} ms)`,
    'cores = CPU seconds per second in that window (process = the dispatcher or the bare loop; ' +
      `machine = everything, the kernel included; ${cpus().length} = all cores busy; ` +
      `${STOLEN_MEANS})`,
    '',
    table([
      [
        'measurement',
        'median',
        'rounds',
        'seconds',
        'cores: process',
        'sink',
        'machine',
        'stolen',
        'CPU µs/request',
      ],
      ...rows([
        dispatcher,
        ledgerOff,
        traced10,
        traced100,
        traced0,
        phases10,
        untraced,
        bare,
        healthy,
        failing,
        input.batch100,
        input.batch1000,
      ]),
    ]),
    '(a) batching: the healthy destination sends its calls as JSON arrays of at most N ' +
      '(batching.maxCalls), ledger on; rate and CPU are per call, not per request',
    `(b): ${HEALTHY_DESTINATIONS + 1} destinations; every ${otherEvery}th delivery is for the ` +
      `other one, whose webhook answers 200 (all healthy) or never (timeouts after ` +
      `${s.requestTimeoutMs} ms); the rest go to the ${HEALTHY_DESTINATIONS} healthy ones in ` +
      'turn; rate = the healthy destinations only',
    `(c): ${count(idle.pausedRecords)} records due in an hour on ${idle.tiers} retry tiers, ` +
      `nothing on the main topic; dispatcher CPU over ${fixed(idle.seconds, 1)} s after ` +
      `${s.idleSettleSeconds} s of settling: ${fixed(idlePercent, 2)}% of one core (the same ` +
      `dispatcher with nothing at all to consume, before the tiers were filled: ` +
      `${fixed((empty.processCores ?? NaN) * 100, 2)}%)`,
    ...ledgerLines(input),
    `signatures: ${input.signatures.checked} checked at the sink (1 request in 1000), ` +
      `${input.signatures.bad} wrong`,
    '',
    table([
      ['ratio (of medians)', 'value', 'goal', '', 'per round'],
      ratioRow(
        '(a) dispatcher deliveries/s (ledger on) ÷ bare undici requests/s',
        rate,
        `>= ${fixed(GOAL.rate, 2)}`,
        rate >= GOAL.rate,
        paired(dispatcher, bare, 'perSecond'),
      ),
      ratioRow(
        '(a) dispatcher CPU/delivery (ledger on) ÷ bare CPU/request',
        cpu,
        `<= ${fixed(GOAL.cpu, 2)}`,
        cpu <= GOAL.cpu,
        paired(dispatcher, bare, 'cpuUsPerRequest'),
      ),
      ratioRow(
        '(a) dispatcher deliveries/s, ledger on ÷ ledger off',
        ledger,
        `>= ${fixed(GOAL.ledger, 2)}`,
        ledger >= GOAL.ledger,
        paired(dispatcher, ledgerOff, 'perSecond'),
      ),
      ratioRow(
        '(a) dispatcher deliveries/s, traces on at 10% ÷ off',
        value(traced10) / value(dispatcher),
        `>= ${fixed(GOAL.traced10, 2)}`,
        value(traced10) / value(dispatcher) >= GOAL.traced10,
        paired(traced10, dispatcher, 'perSecond'),
      ),
      ratioRow(
        '(a) dispatcher deliveries/s, traces off ÷ a build without tracing',
        value(dispatcher) / value(untraced),
        `>= ${fixed(GOAL.untraced, 2)}`,
        value(dispatcher) / value(untraced) >= GOAL.untraced,
        paired(dispatcher, untraced, 'perSecond'),
      ),
      [
        '(a) dispatcher deliveries/s, traces on, none sampled ÷ off',
        fixed(value(traced0) / value(dispatcher), 2),
        '',
        'context',
        paired(traced0, dispatcher, 'perSecond')
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      [
        '(a) CPU/delivery unsampled ÷ sampled at 10%, phases of one process',
        fixed(median(phaseRatios(phases10)), 2),
        '',
        'context',
        phaseRatios(phases10)
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      [
        '(a) dispatcher deliveries/s, traces on at 100% ÷ off',
        fixed(value(traced100) / value(dispatcher), 2),
        '',
        'context',
        paired(traced100, dispatcher, 'perSecond')
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      ratioRow(
        '(b) healthy deliveries/s with timeouts ÷ all healthy',
        isolation,
        `>= ${fixed(GOAL.isolation, 2)}`,
        isolation >= GOAL.isolation,
        paired(failing, healthy, 'perSecond'),
      ),
      ...batchRatios(input),
      [
        '(c) dispatcher CPU, only paused retry partitions',
        `${fixed(idlePercent, 2)}%`,
        `< ${GOAL.idlePercent}%`,
        idlePercent < GOAL.idlePercent ? 'meets goal' : 'MISSES GOAL',
        '',
      ],
    ]),
    ...input.warnings.map((w) => `warning: ${w}`),
  ].join('\n');
}

/** Batching against single-call delivery in the same rounds: calls a second and CPU per call. */
function batchRatios(input: ReportInput): string[][] {
  const { dispatcher } = input;
  return [
    [input.batch100, 'N=100', true],
    [input.batch1000, 'N=1,000', false],
  ].flatMap(([series, n, goal]) => {
    const s = series as Series;
    const rate = value(s) / value(dispatcher);
    const cpu = value(s, 'cpuUsPerRequest') / value(dispatcher, 'cpuUsPerRequest');
    const verdict = (met: boolean) => (!goal ? 'context' : met ? 'meets goal' : 'MISSES GOAL');
    return [
      [
        `(a) batching ${n as string} calls/s ÷ single-call deliveries/s (ledger on)`,
        fixed(rate, 2),
        goal ? `>= ${fixed(GOAL.batchRate, 2)}` : '',
        verdict(rate >= GOAL.batchRate),
        paired(s, dispatcher, 'perSecond')
          .map((r) => fixed(r, 2))
          .join(' '),
      ],
      [
        `(a) batching ${n as string} CPU/call ÷ single-call CPU/delivery`,
        fixed(cpu, 3),
        goal ? `<= ${fixed(GOAL.batchCpu, 2)}` : '',
        verdict(cpu <= GOAL.batchCpu),
        paired(s, dispatcher, 'cpuUsPerRequest')
          .map((r) => fixed(r, 3))
          .join(' '),
      ],
    ];
  });
}
