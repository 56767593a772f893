import {
  admitAttempt,
  BreakerPolicy,
  BreakerState,
  CircuitBreakers,
  closedBreaker,
  recordVerdict,
  Verdict,
  verdictOf,
} from './circuit-breaker';
import type { AttemptResult } from './attempt-result';

const POLICY: BreakerPolicy = {
  failingAfter: 3,
  failureRatio: 0.7,
  minAttempts: 10,
  windowMs: 100_000,
  coolDownMs: 30_000,
  probes: 1,
};

/** One step of a run: an attempt's verdict at a time (`probe` when it was admitted as one). */
type Event =
  | { readonly at: number; readonly record: Verdict; readonly probe?: boolean }
  | { readonly at: number; readonly admit: true };

/** Runs the events from a closed breaker; the state and each transition, as `from>to:reason`. */
function run(events: readonly Event[], policy = POLICY) {
  let state: BreakerState = closedBreaker(0);
  const transitions: string[] = [];
  const admissions: string[] = [];
  for (const event of events) {
    const step =
      'admit' in event
        ? admitAttempt(state, policy, event.at)
        : recordVerdict(state, policy, event.record, event.probe ?? false, event.at);
    if ('admit' in event) {
      const value = step.value as ReturnType<typeof admitAttempt>['value'];
      admissions.push(value.kind === 'attempt' ? (value.probe ? 'probe' : 'attempt') : 'wait');
    }
    state = step.state;
    if (step.transition) {
      const { from, to, reason } = step.transition;
      transitions.push(`${from}>${to}:${reason}`);
    }
  }
  return { state, transitions, admissions };
}

const fail = (at: number, probe = false): Event => ({ at, record: 'failure', probe });
const ok = (at: number, probe = false): Event => ({ at, record: 'success', probe });
const admit = (at: number): Event => ({ at, admit: true });

describe('circuit breaker transitions', () => {
  it.each<[string, Event[], string, string[]]>([
    ['two failures in a row stay closed', [fail(1), fail(2)], 'closed', []],
    [
      'three in a row open it',
      [fail(1), fail(2), fail(3)],
      'open',
      ['closed>open:consecutive_failures'],
    ],
    [
      'a success in between resets the run',
      [fail(1), fail(2), ok(3), fail(4), fail(5)],
      'closed',
      [],
    ],
    [
      'failures older than the window no longer count',
      [fail(0), fail(1), ok(2), fail(3), fail(4), ok(5), fail(6), fail(7), ok(8), fail(150_000)],
      'closed',
      [],
    ],
    [
      'no verdict changes nothing',
      [fail(1), fail(2), { at: 3, record: 'none' }, fail(4)],
      'open',
      ['closed>open:consecutive_failures'],
    ],
  ])('%s', (_name, events, state, transitions) => {
    const result = run(events);
    expect(result.state.kind).toBe(state);
    expect(result.transitions).toEqual(transitions);
  });

  it('opens on the failure share: 7 failures and 3 successes interleaved', () => {
    const pattern = [fail, fail, ok, fail, fail, ok, fail, fail, ok, fail];
    const result = run(pattern.map((f, i) => f(i * 1_000)));
    expect(result.transitions).toEqual(['closed>open:failure_share']);
  });

  it('does not open on a high share below the minimum of attempts', () => {
    const pattern = [fail, fail, ok, fail, fail, ok, fail, fail, ok];
    expect(run(pattern.map((f, i) => f(i * 1_000))).state.kind).toBe('closed');
  });

  it.each<[string, Event[], string[], string, string[]]>([
    ['open: no attempt before the cool-down ends', [admit(29_999)], ['wait'], 'open', []],
    [
      'after the cool-down: one probe, the rest wait',
      [admit(30_000), admit(30_001), admit(30_002)],
      ['probe', 'wait', 'wait'],
      'half_open',
      ['open>half_open:cool_down_over'],
    ],
    [
      "the probe's success closes it",
      [admit(30_000), ok(30_010, true), admit(30_020)],
      ['probe', 'attempt'],
      'closed',
      ['open>half_open:cool_down_over', 'half_open>closed:probe_succeeded'],
    ],
    [
      "the probe's failure opens it for another cool-down",
      [admit(30_000), fail(30_010, true), admit(60_009), admit(60_010)],
      ['probe', 'wait', 'probe'],
      'half_open',
      [
        'open>half_open:cool_down_over',
        'half_open>open:probe_failed',
        'open>half_open:cool_down_over',
      ],
    ],
    [
      'a probe without a verdict frees its place',
      [admit(30_000), { at: 30_010, record: 'none', probe: true }, admit(30_020)],
      ['probe', 'probe'],
      'half_open',
      ['open>half_open:cool_down_over'],
    ],
    [
      'answers of attempts made before it opened change nothing',
      [ok(10), admit(30_000), ok(30_005), admit(30_006)],
      ['probe', 'wait'],
      'half_open',
      ['open>half_open:cool_down_over'],
    ],
  ])('%s', (_name, events, admissions, state, transitions) => {
    const opening = [fail(0), fail(0), fail(0)];
    const result = run([...opening, ...events]);
    expect(result.admissions).toEqual(admissions);
    expect(result.state.kind).toBe(state);
    expect(result.transitions).toEqual(['closed>open:consecutive_failures', ...transitions]);
  });

  it('lets `probes` attempts out at once when configured', () => {
    const policy = { ...POLICY, probes: 2 };
    const result = run(
      [fail(0), fail(0), fail(0), admit(30_000), admit(30_000), admit(30_000)],
      policy,
    );
    expect(result.admissions).toEqual(['probe', 'probe', 'wait']);
  });
});

describe(verdictOf.name, () => {
  const success: AttemptResult = { kind: 'success', status: 200 };
  const refused: AttemptResult = {
    kind: 'retryable',
    reason: 'connection_error',
    detail: 'ECONNREFUSED',
  };
  const gone: AttemptResult = { kind: 'permanent', reason: 'http_4xx', status: 410, detail: '' };
  const guarded: AttemptResult = { kind: 'permanent', reason: 'ssrf_refused', detail: '' };

  it.each<[string, AttemptResult[] | undefined, Verdict]>([
    ['no request made', undefined, 'none'],
    ['a 2xx among failures', [refused, success], 'success'],
    ['a retryable failure', [refused, gone], 'failure'],
    ['a 410 (the receiver answered)', [gone], 'success'],
    ['refused before any request (SSRF guard)', [guarded], 'none'],
  ])('%s', (_name, results, verdict) => {
    expect(verdictOf(results)).toBe(verdict);
  });
});

describe(CircuitBreakers.name, () => {
  it('keeps one breaker per destination and returns each change with its destination', () => {
    const breakers = new CircuitBreakers({ ...POLICY, failingAfter: 1 });
    expect(breakers.record('d-1', 'failure', false, 5)).toEqual({
      destinationId: 'd-1',
      from: 'closed',
      to: 'open',
      reason: 'consecutive_failures',
      at: 5,
    });
    expect(breakers.admit('d-1', 6).admission).toEqual({ kind: 'wait', untilMs: 30_005 });
    expect(breakers.admit('d-2', 6).admission).toEqual({ kind: 'attempt', probe: false });
    expect(breakers.state('d-1')).toBe('open');
    expect(breakers.state('d-2')).toBe('closed');
  });
});
