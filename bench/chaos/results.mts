/** What the chaos suite measured per fault, and its table. */
import { table } from '../report.mts';
import type { Receiver, Sender, SentCall } from './traffic.mts';

/** A call arriving later than this after its acknowledgement was held up by the fault. */
export const LATE_MS = 2_000;

/** When a fault's phase started, the fault began and ended, and deliveries flowed again. */
export interface PhaseTimes {
  readonly id: string;
  readonly name: string;
  readonly phaseStart: number;
  readonly faultStart: number;
  /** When the service taken away was back (an app started again, a server listening). */
  readonly faultEnd: number;
  /** When "flowing again" counts from, if not `faultEnd` (a broker's kill, not its return). */
  readonly flowFrom?: number;
  /** The first arrival of a call made after `flowFrom`; undefined when none came in time. */
  readonly recoveredAt: number | undefined;
  /** Lines the fault adds to the report (what it checked beyond the counts). */
  readonly notes?: readonly string[];
  /** Each app's /health/ready answers while the fault lasted, in order (`200>503>200`). */
  readonly readiness: Record<string, string>;
}

/** One fault's line of the report. */
export interface FaultResult {
  readonly id: string;
  readonly name: string;
  /** Calls made in this phase that ingest acknowledged (200). */
  readonly acknowledged: number;
  /** Of those, the ones the receiver got at least once. */
  readonly delivered: number;
  readonly lost: number;
  /** Arrivals during this phase of a messageId that had arrived before. */
  readonly duplicates: number;
  /** Of those, arrivals of calls the client sent more than once (after a 503 or a timeout). */
  readonly duplicatesOfRetried: number;
  /** Seconds from the fault's start to its end (a restart's or a service's start included). */
  readonly faultSeconds: number;
  /** Seconds from the fault's end (or `flowFrom`) until a call made after it arrived. */
  readonly flowingAgainSeconds: number | null;
  /**
   * Seconds from the fault's start to the last arrival, in this phase, of a call that arrived
   * more than {@link LATE_MS} after ingest acknowledged it: when every partition flowed again.
   */
  readonly caughtUpSeconds: number | null;
  /** The longest time without any arrival, from the fault's start to the phase's end. */
  readonly longestGapSeconds: number;
  /** Requests answered otherwise than 200 in this phase, by answer. */
  readonly clientErrors: Record<string, number>;
  readonly readiness: Record<string, string>;
  readonly notes: readonly string[];
}

/** The whole run. */
export interface ChaosReport {
  readonly faults: FaultResult[];
  /** Arrivals whose signature did not verify (each a failure of the suite). */
  readonly badSignatures: number;
  /** Calls made that were never acknowledged (given up at the end). */
  readonly unacknowledged: number;
}

export function results(
  phases: readonly PhaseTimes[],
  sender: Sender,
  receiver: Receiver,
): ChaosReport {
  const duplicates: { at: number; retried: boolean; firstAt: number }[] = [];
  for (const [messageId, arrivals] of receiver.arrivals) {
    const retried = (sender.calls.get(messageId)?.attempts ?? 0) > 1;
    for (const at of arrivals.at.slice(1))
      duplicates.push({ at, retried, firstAt: arrivals.at[0] });
  }
  const faults = phases.map((p, i): FaultResult => {
    const phase = i + 1;
    const end = phases[i + 1]?.phaseStart ?? Infinity;
    const acked = sender.acked(phase);
    const delivered = acked.filter((c) => receiver.arrivals.has(c.messageId)).length;
    const gapEnd = Math.min(end, Date.now());
    const inPhase = duplicates.filter((d) => d.at >= p.phaseStart && d.at < end);
    return {
      id: p.id,
      name: p.name,
      acknowledged: acked.length,
      delivered,
      lost: acked.length - delivered,
      duplicates: inPhase.length,
      duplicatesOfRetried: inPhase.filter((d) => d.retried).length,
      faultSeconds: round((p.faultEnd - p.faultStart) / 1_000),
      flowingAgainSeconds:
        p.recoveredAt === undefined
          ? null
          : round((p.recoveredAt - (p.flowFrom ?? p.faultEnd)) / 1_000),
      caughtUpSeconds: caughtUp(acked, receiver, p.faultStart, end),
      longestGapSeconds: round(longestGap(receiver.times, p.faultStart, gapEnd) / 1_000),
      clientErrors: Object.fromEntries(sender.failures.get(phase) ?? []),
      readiness: p.readiness,
      notes: [...(p.notes ?? []), ...duplicateAges(inPhase)],
    };
  });
  const unacknowledged = [...sender.calls.values()].filter((c) => c.ackedAt === undefined).length;
  return { faults, badSignatures: receiver.badSignatures, unacknowledged };
}

/** A fault's cells shared by both tables. */
function dupCell(f: FaultResult): string {
  return `${f.duplicates}${f.duplicatesOfRetried > 0 ? ` (${f.duplicatesOfRetried} retried)` : ''}`;
}

function flowingCell(f: FaultResult): string {
  return f.flowingAgainSeconds === null ? 'not in 90 s' : f.flowingAgainSeconds.toFixed(1);
}

function clientCell(f: FaultResult): string {
  return (
    Object.entries(f.clientErrors)
      .map(([answer, n]) => `${answer} x${n}`)
      .join(', ') || '-'
  );
}

function readinessCell(f: FaultResult): string {
  return Object.entries(f.readiness)
    .map(([instance, seen]) => `${instance} ${seen}`)
    .join('; ');
}

/** The table `npm run chaos` prints. */
export function resultsTable(report: ChaosReport, rate: number): string {
  const rows = report.faults.map((f) => [
    f.name,
    String(f.acknowledged),
    String(f.delivered),
    String(f.lost),
    dupCell(f),
    f.faultSeconds.toFixed(1),
    flowingCell(f),
    f.longestGapSeconds.toFixed(1),
    clientCell(f),
    readinessCell(f),
  ]);
  return [
    '',
    `Sluice chaos suite: ${rate} calls/s open loop, one fault at a time`,
    "fault s = the fault's length, an app's or a service's start included; flowing again = s " +
      "from the fault's end to the first " +
      'arrival of a call made after it; gap = longest time without any arrival from the ' +
      "fault's start; dup (retried) = copies of calls the client sent again after a 503 or a " +
      "timeout; readiness = each app's /health/ready answers during the fault (first seen " +
      'order, then the last)',
    '',
    table([
      [
        'fault',
        'acked',
        'delivered',
        'lost',
        'dup',
        'fault s',
        'flowing again s',
        'gap s',
        'client saw',
        'readiness',
      ],
      ...rows,
    ]),
    '',
    `bad signatures: ${report.badSignatures}; calls never acknowledged: ${report.unacknowledged}`,
  ].join('\n');
}

/** The table `npm run chaos -- --cluster` prints: the columns above and "caught up s". */
export function clusterResultsTable(report: ChaosReport, rate: number, brokers: string): string {
  const seconds = (value: number | null) => (value === null ? '-' : value.toFixed(1));
  const rows = report.faults.map((f) => [
    f.name,
    String(f.acknowledged),
    String(f.delivered),
    String(f.lost),
    dupCell(f),
    f.faultSeconds.toFixed(1),
    flowingCell(f),
    seconds(f.caughtUpSeconds),
    f.longestGapSeconds.toFixed(1),
    clientCell(f),
  ]);
  const details = report.faults.flatMap((f) => [
    `${f.name}:`,
    `  readiness: ${readinessCell(f)}`,
    ...f.notes.map((note) => `  ${note}`),
  ]);
  return [
    '',
    `Sluice cluster chaos: ${brokers}, two replicas of each app, ${rate} calls/s open loop`,
    "fault s = the fault's length, a restart included; flowing again = s from the fault's " +
      "reference (a broker's kill, else the fault's end) to the first arrival of a call made " +
      "after it; caught up = s from the fault's start to the last arrival of a call delivered " +
      `more than ${LATE_MS / 1_000} s after its acknowledgement; gap = longest time without ` +
      "any arrival from the fault's start; dup (retried) = copies of calls the client sent " +
      'again after a 503 or a timeout',
    '',
    table([
      [
        'fault',
        'acked',
        'delivered',
        'lost',
        'dup',
        'fault s',
        'flowing again s',
        'caught up s',
        'gap s',
        'client saw',
      ],
      ...rows,
    ]),
    '',
    ...details,
    '',
    `bad signatures: ${report.badSignatures}; calls never acknowledged: ${report.unacknowledged}`,
  ].join('\n');
}

/** How long before its copy each duplicate's first copy had arrived (a replay's depth). */
function duplicateAges(duplicates: readonly { at: number; firstAt: number }[]): string[] {
  if (duplicates.length === 0) return [];
  const ages = duplicates.map((d) => (d.at - d.firstAt) / 1_000).sort((a, b) => a - b);
  const median = ages[Math.floor(ages.length / 2)];
  return [
    `duplicates arrived ${median.toFixed(1)} s (median) and up to ${ages[ages.length - 1].toFixed(1)} s after the first copy`,
  ];
}

function caughtUp(
  acked: readonly SentCall[],
  receiver: Receiver,
  faultStart: number,
  phaseEnd: number,
): number | null {
  let last: number | undefined;
  for (const call of acked) {
    const first = receiver.arrivals.get(call.messageId)?.at[0];
    if (first === undefined || first >= phaseEnd || first - call.ackedAt! <= LATE_MS) continue;
    if (last === undefined || first > last) last = first;
  }
  return last === undefined ? null : round(Math.max(0, last - faultStart) / 1_000);
}

function longestGap(times: readonly number[], from: number, to: number): number {
  let previous = from;
  let longest = 0;
  for (const t of times) {
    if (t < from) continue;
    if (t > to) break;
    longest = Math.max(longest, t - previous);
    previous = t;
  }
  return Math.max(longest, to - previous);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
