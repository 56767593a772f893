/**
 * The `phases10` side of bench:dispatcher and bench:ingest: the app at 10% of new traces with
 * bench/sampling-phases.mts preloaded, which switches sampling on and off every 2 s; here the
 * phases' CPU is divided by the deliveries the sink received in each (the dispatcher), or by
 * the requests the app received (ingest).
 */
import { resolve } from 'node:path';

import type { Managed } from './processes.mts';
import type { SamplingPhase } from './sampling-phases.mts';
import { tracingEnv } from './tracing-sides.mts';

/** The sink's count at a moment (wall-clock epoch ms, as the phases have it). */
export interface Count {
  readonly at: number;
  readonly count: number;
}

const PRELOAD = resolve(import.meta.dirname, 'sampling-phases.mts');

/**
 * The variables of the side: traces at 10%, the preload, and exports every 200 ms (a phase's
 * spans are exported within it, not in the next one).
 */
export function phasesEnv(otlpUrl: string): Record<string, string> {
  const options = [process.env.NODE_OPTIONS, `--import=${PRELOAD}`].filter(Boolean).join(' ');
  return { ...tracingEnv(otlpUrl, 0.1), OTEL_BSP_SCHEDULE_DELAY: '200', NODE_OPTIONS: options };
}

/** The phases `child` reports on stderr from now on, as they come. */
export function phaseLines(child: Managed): SamplingPhase[] {
  const phases: SamplingPhase[] = [];
  child.onErrorLine((line) => {
    if (line.startsWith('{"samplingPhase"')) phases.push(JSON.parse(line) as SamplingPhase);
  });
  return phases;
}

/** CPU µs a delivery or request in the sampled phases and in the unsampled ones. */
export interface PhaseCosts {
  readonly sampledUs: number;
  readonly unsampledUs: number;
}

/** The unsampled phases' CPU a unit ÷ the sampled phases': what sampling leaves of a unit. */
export function phaseRatio(costs: PhaseCosts): number {
  return costs.unsampledUs / costs.sampledUs;
}

/**
 * CPU µs a delivery in the sampled and the unsampled phases that lie wholly within `counts`
 * (the measured window); undefined unless both kinds have one.
 */
export function phaseCosts(
  phases: readonly SamplingPhase[],
  counts: readonly Count[],
): PhaseCosts | undefined {
  if (counts.length < 2) return undefined;
  const window = { from: counts[0].at, to: counts[counts.length - 1].at };
  return costs(phases, window, (p) => countAt(counts, p.endedAt) - countAt(counts, p.startedAt));
}

/**
 * CPU µs a request the app received in the sampled and the unsampled phases that lie wholly
 * within `window` (wall-clock epoch ms); undefined unless both kinds have one.
 */
export function requestCosts(
  phases: readonly SamplingPhase[],
  window: { readonly from: number; readonly to: number },
): PhaseCosts | undefined {
  return costs(phases, window, (p) => p.requests);
}

function costs(
  phases: readonly SamplingPhase[],
  window: { readonly from: number; readonly to: number },
  units: (phase: SamplingPhase) => number,
): PhaseCosts | undefined {
  const cpu = { on: 0, off: 0 };
  const done = { on: 0, off: 0 };
  for (const phase of phases) {
    if (phase.startedAt < window.from || phase.endedAt > window.to) continue;
    cpu[phase.samplingPhase] += phase.cpuUs;
    done[phase.samplingPhase] += units(phase);
  }
  if (done.on === 0 || done.off === 0) return undefined;
  return { sampledUs: cpu.on / done.on, unsampledUs: cpu.off / done.off };
}

/** The count at `at`, interpolated between the polls around it. */
function countAt(counts: readonly Count[], at: number): number {
  const after = counts.findIndex((c) => c.at >= at);
  if (after <= 0) return counts[Math.max(after, 0)].count;
  const [a, b] = [counts[after - 1], counts[after]];
  return a.count + ((b.count - a.count) * (at - a.at)) / (b.at - a.at);
}
