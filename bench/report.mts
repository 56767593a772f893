/** Medians, ratios and the printed table of the ingest benchmark. */

/** One run of one measurement. */
export interface Sample {
  /** Events/s, requests/s or records/s. */
  readonly value: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  /** CPU used during the run, in cores, by the server under test, the broker and the client. */
  readonly serverCores?: number;
  readonly brokerCores?: number;
  readonly clientCores?: number;
  /** CPU the whole machine used (everything, the kernel included), in cores. */
  readonly machineCores?: number;
  /** CPU the machine wanted and the hypervisor gave other machines (steal), in cores. */
  readonly stealCores?: number;
  /** Server CPU per event or request, in microseconds. */
  readonly serverCpuUs?: number;
}

/** A measurement and its runs, one per round. */
export interface Series {
  readonly label: string;
  readonly unit: string;
  readonly samples: Sample[];
}

/** A ratio with its goal: `atLeast` for throughput ratios. */
export interface Ratio {
  readonly label: string;
  readonly value: number;
  readonly goal: number;
  /** The same ratio round by round (paired runs), to show the spread. */
  readonly perRound: readonly number[];
}

export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The median of one field over a series' samples. */
export function medianOf(series: Series, field: keyof Sample): number {
  return median(series.samples.map((s) => s[field] ?? NaN));
}

/** The measurements table: medians first, then each round's value. */
export function seriesTable(series: readonly Series[]): string {
  const header = [
    'measurement',
    'median',
    'rounds',
    'p50 ms',
    'p99 ms',
    'cores: server',
    'broker',
    'client',
    'machine',
    'stolen',
    'server CPU µs/unit',
  ];
  const rows = series.map((s) => [
    `${s.label} ${s.unit}`,
    count(medianOf(s, 'value')),
    s.samples.map((x) => count(x.value)).join(' '),
    fixed(medianOf(s, 'p50Ms'), 1),
    fixed(medianOf(s, 'p99Ms'), 1),
    fixed(medianOf(s, 'serverCores'), 2),
    fixed(medianOf(s, 'brokerCores'), 2),
    fixed(medianOf(s, 'clientCores'), 2),
    fixed(medianOf(s, 'machineCores'), 2),
    fixed(medianOf(s, 'stealCores'), 2),
    fixed(medianOf(s, 'serverCpuUs'), 1),
  ]);
  return table([header, ...rows]);
}

/** The ratios against their goals. */
export function ratioTable(ratios: readonly Ratio[]): string {
  const rows = ratios.map((r) => [
    r.label,
    fixed(r.value, 2),
    `>= ${fixed(r.goal, 2)}`,
    r.value >= r.goal ? 'meets goal' : 'BELOW GOAL',
    r.perRound.map((v) => fixed(v, 2)).join(' '),
  ]);
  return table([['ratio (of medians)', 'value', 'goal', '', 'per round'], ...rows]);
}

/** Left-aligns the first column, right-aligns the others. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((r) => (r[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function count(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-';
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}
