/** What the pipeline bench prints: its phases' figures, round by round and as medians, and the goals. */
import { type AppName, APPS } from './chaos/apps.mts';
import { FROM_MARK, TO_MARK } from './pipeline-measure.mts';
import { count, fixed, median, table } from './report.mts';

/** One phase's figures, measured between its marks. */
export interface PhaseRow {
  readonly label: string;
  /** Requests a second asked for (open loop). */
  readonly targetPerSecond?: number;
  readonly sentPerSecond?: number;
  readonly deliveredPerSecond: number;
  /** CPU µs per call of each measured process (per second at rest). */
  readonly cpuUs: Partial<Record<string, number>>;
  /** CPU µs per call of the broker's JIT compiler threads: not in `cpuUs` nor the total. */
  readonly brokerJitUs?: number;
  readonly machineCores: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly maxMs?: number;
  /** Acknowledged calls that never arrived. */
  readonly lost?: number;
  readonly failures?: string;
  /** Kafka requests of each app per delivered call (per second at rest), by API. */
  readonly requests?: Map<AppName, Map<string, number>>;
}

/** One round: the pipeline at three rates, the bare pipeline at two, the apps alone. */
export interface RoundResult {
  readonly max: PhaseRow;
  readonly at50: PhaseRow;
  readonly at25: PhaseRow;
  readonly bareMax: PhaseRow;
  readonly bare50: PhaseRow;
  /** Each app alone at saturation, then their sum. */
  readonly saturated: readonly PhaseRow[];
}

export interface ReportHeader {
  readonly machine: string;
  readonly seconds: number;
  readonly partitions: number;
  readonly inFlight: number;
}

const PROCESSES = [...APPS, 'broker', 'bare server', 'bare loop'] as const;
/** Goals of the issue that asked for this bench, checked on the medians. */
const GOALS = { cpuRatio: 1.3, p99Ms: 50, maxRatio: 0.5, restCorePercent: 3 } as const;

/** Total CPU µs per call of a row: every process measured in it. */
export function totalUs(row: PhaseRow): number {
  const values = Object.values(row.cpuUs).filter((v): v is number => v !== undefined);
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0);
}

/** The four apps' and the broker's part of a row's total (at rest, the bare processes idle too). */
function pipelineUs(row: PhaseRow): number {
  return [...APPS, 'broker'].reduce((sum, name) => sum + (row.cpuUs[name] ?? 0), 0);
}

function rowsOf(round: RoundResult): PhaseRow[] {
  return [round.max, round.at50, round.at25, round.bareMax, round.bare50, ...round.saturated];
}

function phaseTable(rows: readonly PhaseRow[]): string {
  const header = [
    'phase',
    'target/s',
    'sent/s',
    'delivered/s',
    ...PROCESSES.map((p) => `${p} µs`),
    'total µs',
    'broker JIT µs',
    'machine cores',
    'p50 ms',
    'p99 ms',
    'max ms',
    'lost',
    'failed requests',
  ];
  const body = rows.map((r) => [
    r.label,
    r.targetPerSecond === undefined ? '' : count(r.targetPerSecond),
    r.sentPerSecond === undefined ? '' : count(r.sentPerSecond),
    count(r.deliveredPerSecond),
    ...PROCESSES.map((p) => (r.cpuUs[p] === undefined ? '' : fixed(r.cpuUs[p], 0))),
    fixed(totalUs(r), 0),
    r.brokerJitUs === undefined ? '' : fixed(r.brokerJitUs, 0),
    fixed(r.machineCores, 2),
    r.p50Ms === undefined ? '' : fixed(r.p50Ms, 1),
    r.p99Ms === undefined ? '' : fixed(r.p99Ms, 1),
    r.maxMs === undefined ? '' : fixed(r.maxMs, 0),
    r.lost === undefined ? '' : String(r.lost),
    r.failures === undefined ? '' : r.failures || '-',
  ]);
  return table([header, ...body]);
}

/** Each cell the median over the rounds (rows matched by position). */
function medianRows(rounds: readonly RoundResult[]): PhaseRow[] {
  const all = rounds.map(rowsOf);
  return all[0].map((first, i) => {
    const same = all.map((rows) => rows[i]);
    const m = (f: (r: PhaseRow) => number | undefined) => {
      const values = same.map(f).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : median(values);
    };
    const cpuUs: Partial<Record<string, number>> = {};
    for (const p of PROCESSES) {
      const value = m((r) => r.cpuUs[p]);
      if (value !== undefined) cpuUs[p] = value;
    }
    return {
      label: first.label,
      targetPerSecond: m((r) => r.targetPerSecond),
      sentPerSecond: m((r) => r.sentPerSecond),
      deliveredPerSecond: m((r) => r.deliveredPerSecond) ?? NaN,
      cpuUs,
      brokerJitUs: m((r) => r.brokerJitUs),
      machineCores: m((r) => r.machineCores) ?? NaN,
      p50Ms: m((r) => r.p50Ms),
      p99Ms: m((r) => r.p99Ms),
      maxMs: m((r) => r.maxMs),
      lost: m((r) => r.lost),
      failures:
        same
          .map((r) => r.failures ?? '')
          .join(' ')
          .trim() || undefined,
    };
  });
}

/** Kafka requests per call (per second at rest), by app and API, the APIs used most first. */
function requestsTable(rows: readonly PhaseRow[], unit: string): string {
  const apis = new Map<string, number>();
  for (const row of rows) {
    for (const perApi of row.requests?.values() ?? []) {
      for (const [api, n] of perApi) apis.set(api, (apis.get(api) ?? 0) + n);
    }
  }
  const order = [...apis].sort((a, b) => b[1] - a[1]).map(([api]) => api);
  const header = ['app', ...order, `all (${unit})`];
  const body = APPS.map((app) => {
    const values = order.map((api) => median(rows.map((r) => r.requests?.get(app)?.get(api) ?? 0)));
    return [
      app,
      ...values.map((v) => fixed(v, 2)),
      fixed(
        values.reduce((a, b) => a + b, 0),
        2,
      ),
    ];
  });
  return table([header, ...body]);
}

interface Goal {
  readonly label: string;
  readonly perRound: readonly number[];
  readonly goal: number;
  readonly atMost: boolean;
  readonly beside?: string;
}

function goals(idle: PhaseRow, rounds: readonly RoundResult[]): Goal[] {
  const saturatedSum = (r: RoundResult) => totalUs(r.saturated[r.saturated.length - 1]);
  // What the pipeline costs a second doing nothing, spread over the calls of a second at 50%.
  const restShare = (r: RoundResult) => pipelineUs(idle) / r.at50.deliveredPerSecond;
  const rounded = (values: readonly number[]) => values.map((v) => fixed(v, 2)).join(' ');
  return [
    {
      label: '(a) CPU per call at 50% ÷ the sum of the apps alone at saturation',
      perRound: rounds.map((r) => totalUs(r.at50) / saturatedSum(r)),
      goal: GOALS.cpuRatio,
      atMost: true,
      beside:
        `without the pipeline's cost at rest: ${rounded(
          rounds.map((r) => (totalUs(r.at50) - restShare(r)) / saturatedSum(r)),
        )}; ` +
        `bare pipeline at the same rate ÷ its maximum: ${rounded(
          rounds.map((r) => totalUs(r.bare50) / totalUs(r.bareMax)),
        )}`,
    },
    {
      label: '(b) p99 ms at 50% (request sent -> webhook arrived)',
      perRound: rounds.map((r) => r.at50.p99Ms ?? NaN),
      goal: GOALS.p99Ms,
      atMost: true,
      beside: `bare pipeline at the same rate: p99 ${rounds
        .map((r) => fixed(r.bare50.p99Ms ?? NaN, 1))
        .join(' ')} ms`,
    },
    {
      label: '(c) maximum delivered/s ÷ the bare pipeline maximum',
      perRound: rounds.map((r) => r.max.deliveredPerSecond / r.bareMax.deliveredPerSecond),
      goal: GOALS.maxRatio,
      atMost: false,
    },
  ];
}

/** The four apps and the broker doing nothing, in percent of one core (10,000 µs a second = 1%). */
function restGoal(idle: PhaseRow): Goal {
  return {
    label: '(d) the pipeline at rest, % of a core (four apps and the broker, its JIT apart)',
    perRound: [pipelineUs(idle) / 10_000],
    goal: GOALS.restCorePercent,
    atMost: true,
  };
}

function goalTable(list: readonly Goal[]): string {
  const body = list.map((g) => {
    const value = median(g.perRound);
    const met = g.atMost ? value <= g.goal : value >= g.goal;
    return [
      g.label,
      fixed(value, 2),
      `${g.atMost ? '<=' : '>='} ${g.goal}`,
      met ? 'meets goal' : 'MISSES GOAL',
      g.perRound.map((v) => fixed(v, 2)).join(' '),
      g.beside ?? '',
    ];
  });
  return table([['goal (median of the rounds)', 'value', 'goal', '', 'per round', ''], ...body]);
}

export function report(h: ReportHeader, idle: PhaseRow, rounds: readonly RoundResult[]): string {
  const out = [
    `machine: ${h.machine}; ${h.seconds} s a phase, ${h.partitions} partitions, closed loops ` +
      `${h.inFlight} in flight, ${rounds.length} round(s)`,
    `µs = CPU µs (user + system, /proc) per call between the phase's ${FROM_MARK * 100}% and ` +
      `${TO_MARK * 100}% marks (deliveries; for ingest alone, answers); latency = request sent ` +
      '-> webhook arrived, of the calls arriving between the marks; lost = acknowledged, never arrived',
    '',
    'At rest (nothing sent): CPU µs a second (10,000 = 1% of a core) and Kafka requests a second',
    phaseTable([idle]),
    '',
    requestsTable([idle], 'per second'),
  ];
  if (rounds.length === 0) return [...out, '', goalTable([restGoal(idle)])].join('\n');
  rounds.forEach((round, i) => out.push('', `Round ${i + 1}`, phaseTable(rowsOf(round))));
  if (rounds.length > 1) out.push('', 'Medians of the rounds', phaseTable(medianRows(rounds)));
  out.push(
    '',
    'Kafka requests per delivered call at 50% (medians of the rounds)',
    requestsTable(
      rounds.map((r) => r.at50),
      'per call',
    ),
    '',
    goalTable([...goals(idle, rounds), restGoal(idle)]),
  );
  return out.join('\n');
}

/** The one phase of a held rate (BENCH_PIPELINE_RATE). */
export function holdReport(row: PhaseRow): string {
  return [phaseTable([row]), '', requestsTable([row], 'per call')].join('\n');
}
