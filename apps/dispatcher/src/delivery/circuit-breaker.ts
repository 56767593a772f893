import type { BreakerStateName } from '@app/contracts';

import type { AttemptResult } from './attempt-result';

/** When a destination's breaker opens, and how it probes (from the app's configuration). */
export interface BreakerPolicy {
  /** Consecutive failed attempts that open the breaker. */
  readonly failingAfter: number;
  /** Share of failed attempts in the window (0 to 1) that opens it... */
  readonly failureRatio: number;
  /** ...once the window holds at least this many attempts. */
  readonly minAttempts: number;
  readonly windowMs: number;
  /** How long an open breaker lets no attempt out before it probes. */
  readonly coolDownMs: number;
  /** Attempts let out at once while half-open. */
  readonly probes: number;
}

/** What an attempt says about its destination: its receiver failed, answered, or neither. */
export type Verdict = 'failure' | 'success' | 'none';

/** Attempts of one slice of the window (the window is `BUCKETS` slices). */
interface Bucket {
  readonly start: number;
  readonly attempts: number;
  readonly failures: number;
}

const BUCKETS = 10;

/** One destination's breaker. `since` is when it entered that state (epoch ms). */
export type BreakerState =
  | {
      readonly kind: 'closed';
      readonly since: number;
      readonly streak: number;
      readonly buckets: readonly Bucket[];
    }
  | { readonly kind: 'open'; readonly since: number; readonly probeAt: number }
  | { readonly kind: 'half_open'; readonly since: number; readonly probesOut: number };

export type { BreakerStateName };

/** The gauge's value of each state: higher is worse. */
export const BREAKER_STATE_VALUE: Readonly<Record<BreakerStateName, number>> = {
  closed: 0,
  half_open: 1,
  open: 2,
};

/** Whether an attempt may go out now (a probe when half-open), or wait until `untilMs`. */
export type BreakerAdmission =
  | { readonly kind: 'attempt'; readonly probe: boolean }
  | { readonly kind: 'wait'; readonly untilMs: number };

/** Why a breaker changed state. */
export type TransitionReason =
  'consecutive_failures' | 'failure_share' | 'cool_down_over' | 'probe_failed' | 'probe_succeeded';

export interface Transition {
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
  readonly reason: TransitionReason;
}

/** A step of the breaker: its next state, and the change of state when there was one. */
export interface Step<T> {
  readonly state: BreakerState;
  readonly transition?: Transition;
  readonly value: T;
}

export function closedBreaker(now: number): BreakerState {
  return { kind: 'closed', since: now, streak: 0, buckets: [] };
}

/**
 * Closed lets every attempt out. Open lets none out before its probe time, then turns
 * half-open. Half-open lets out at most `probes` attempts at once; the others wait for the
 * probe's answer (they come back after the shortest wait the caller has).
 */
export function admitAttempt(
  state: BreakerState,
  policy: BreakerPolicy,
  now: number,
): Step<BreakerAdmission> {
  switch (state.kind) {
    case 'closed':
      return { state, value: { kind: 'attempt', probe: false } };
    case 'open': {
      if (now < state.probeAt) return { state, value: { kind: 'wait', untilMs: state.probeAt } };
      return {
        state: { kind: 'half_open', since: now, probesOut: 1 },
        transition: { from: 'open', to: 'half_open', reason: 'cool_down_over' },
        value: { kind: 'attempt', probe: true },
      };
    }
    case 'half_open':
      if (state.probesOut >= policy.probes) return { state, value: { kind: 'wait', untilMs: now } };
      return {
        state: { ...state, probesOut: state.probesOut + 1 },
        value: { kind: 'attempt', probe: true },
      };
  }
}

/**
 * Counts an attempt's verdict. Closed: a failure opens after `failingAfter` in a row, or when
 * the window holds `minAttempts` with a failure share of `failureRatio` or more. Half-open: a
 * probe's success closes, its failure opens again for a cool-down. Attempts that started
 * before the breaker opened and end after it change nothing; a probe with no verdict (no
 * request made) only frees its place.
 */
export function recordVerdict(
  state: BreakerState,
  policy: BreakerPolicy,
  verdict: Verdict,
  probe: boolean,
  now: number,
): Step<void> {
  if (state.kind === 'closed') return recordClosed(state, policy, verdict, now);
  if (state.kind === 'open' || !probe) return { state, value: undefined };
  if (verdict === 'none') {
    return { state: { ...state, probesOut: Math.max(state.probesOut - 1, 0) }, value: undefined };
  }
  if (verdict === 'success') {
    return {
      state: closedBreaker(now),
      transition: { from: 'half_open', to: 'closed', reason: 'probe_succeeded' },
      value: undefined,
    };
  }
  return {
    state: opened(policy, now),
    transition: { from: 'half_open', to: 'open', reason: 'probe_failed' },
    value: undefined,
  };
}

function recordClosed(
  state: Extract<BreakerState, { kind: 'closed' }>,
  policy: BreakerPolicy,
  verdict: Verdict,
  now: number,
): Step<void> {
  if (verdict === 'none') return { state, value: undefined };
  const failed = verdict === 'failure' ? 1 : 0;
  const buckets = addToWindow(state.buckets, policy.windowMs, now, failed);
  const streak = failed ? state.streak + 1 : 0;
  const reason = openReason(streak, buckets, policy);
  if (reason === undefined) return { state: { ...state, streak, buckets }, value: undefined };
  return {
    state: opened(policy, now),
    transition: { from: 'closed', to: 'open', reason },
    value: undefined,
  };
}

function openReason(
  streak: number,
  buckets: readonly Bucket[],
  policy: BreakerPolicy,
): TransitionReason | undefined {
  if (streak >= policy.failingAfter) return 'consecutive_failures';
  const attempts = buckets.reduce((sum, b) => sum + b.attempts, 0);
  const failures = buckets.reduce((sum, b) => sum + b.failures, 0);
  if (attempts >= policy.minAttempts && failures >= policy.failureRatio * attempts) {
    return 'failure_share';
  }
  return undefined;
}

function opened(policy: BreakerPolicy, now: number): BreakerState {
  return { kind: 'open', since: now, probeAt: now + policy.coolDownMs };
}

/** The window's slices with this attempt added; slices older than the window are dropped. */
function addToWindow(
  buckets: readonly Bucket[],
  windowMs: number,
  now: number,
  failed: number,
): Bucket[] {
  const width = Math.max(Math.floor(windowMs / BUCKETS), 1);
  const start = now - (now % width);
  const kept = buckets.filter((b) => b.start > now - windowMs);
  const last = kept[kept.length - 1];
  if (last !== undefined && last.start === start) {
    kept[kept.length - 1] = {
      start,
      attempts: last.attempts + 1,
      failures: last.failures + failed,
    };
  } else {
    kept.push({ start, attempts: 1, failures: failed });
  }
  return kept;
}

/**
 * What an attempt's answers say about the receiver: any 2xx is a success; else any retryable
 * failure (timeout, refused, 5xx, 408, 429) a failure; an answer with a permanent status
 * (410 and other 4xx, 3xx) a success, since the receiver is up; no request made (SSRF guard,
 * certificate, no answers) no verdict.
 */
export function verdictOf(results: readonly AttemptResult[] | undefined): Verdict {
  if (results === undefined || results.length === 0) return 'none';
  if (results.some((r) => r.kind === 'success')) return 'success';
  if (results.some((r) => r.kind === 'retryable')) return 'failure';
  return results.some((r) => r.status !== undefined) ? 'success' : 'none';
}

/** A change of one destination's breaker, as the dispatcher logs, counts and publishes it. */
export interface BreakerChange extends Transition {
  readonly destinationId: string;
  readonly at: number;
}

/**
 * The breakers of this process, one per destination, in memory: each replica keeps its own
 * (no round trip per delivery). Holds state only; the caller acts on the changes returned.
 */
export class CircuitBreakers {
  private readonly states = new Map<string, BreakerState>();

  constructor(private readonly policy: BreakerPolicy) {}

  /** Whether an attempt to the destination may go out now, and the change it made. */
  admit(
    destinationId: string,
    now: number,
  ): { admission: BreakerAdmission; change?: BreakerChange } {
    const state = this.states.get(destinationId);
    if (state === undefined) return { admission: { kind: 'attempt', probe: false } };
    const step = admitAttempt(state, this.policy, now);
    this.states.set(destinationId, step.state);
    return { admission: step.value, change: this.change(destinationId, step, now) };
  }

  /** Counts an attempt's verdict; the change it made, if any. */
  record(
    destinationId: string,
    verdict: Verdict,
    probe: boolean,
    now: number,
  ): BreakerChange | undefined {
    const state = this.states.get(destinationId) ?? closedBreaker(now);
    const step = recordVerdict(state, this.policy, verdict, probe, now);
    this.states.set(destinationId, step.state);
    return this.change(destinationId, step, now);
  }

  /** Each destination's state, for the gauge. */
  entries(): IterableIterator<[string, BreakerState]> {
    return this.states.entries();
  }

  state(destinationId: string): BreakerStateName {
    return this.states.get(destinationId)?.kind ?? 'closed';
  }

  private change(
    destinationId: string,
    step: Step<unknown>,
    now: number,
  ): BreakerChange | undefined {
    return step.transition && { ...step.transition, destinationId, at: now };
  }
}
