import type { BreakerChangeRecord } from '@app/contracts';

import { BREAKER_STALE_MS, BreakerStates, BreakerView } from './breaker-states';

const NOW = 1_700_000_000_000;
const iso = (ms: number): string => new Date(ms).toISOString();

function change(
  replica: string,
  state: BreakerChangeRecord['state'],
  since: number,
  at = since,
): BreakerChangeRecord {
  return { destinationId: 'd-1', replica, state, since, at };
}

describe(BreakerStates.name, () => {
  it.each<[string, BreakerChangeRecord[], BreakerView]>([
    ['nothing seen: closed, no since', [], { state: 'closed', since: null, openReplicas: 0 }],
    [
      'one replica open',
      [change('r1', 'open', NOW - 5_000)],
      { state: 'open', since: iso(NOW - 5_000), openReplicas: 1 },
    ],
    [
      'open in one, half-open in another: open, since the earliest',
      [change('r1', 'half_open', NOW - 9_000), change('r2', 'open', NOW - 2_000)],
      { state: 'open', since: iso(NOW - 9_000), openReplicas: 2 },
    ],
    [
      'only probing: half-open',
      [change('r1', 'half_open', NOW - 1_000), change('r2', 'closed', NOW - 50_000)],
      { state: 'half_open', since: iso(NOW - 1_000), openReplicas: 1 },
    ],
    [
      'opened then closed: closed since the closing',
      [change('r1', 'open', NOW - 9_000), change('r1', 'closed', NOW - 1_000)],
      { state: 'closed', since: iso(NOW - 1_000), openReplicas: 0 },
    ],
    [
      'an older record read after a newer one changes nothing',
      [change('r1', 'closed', NOW - 1_000), change('r1', 'open', NOW - 9_000)],
      { state: 'closed', since: iso(NOW - 1_000), openReplicas: 0 },
    ],
    [
      'a replica open but silent past the staleness: gone',
      [change('r1', 'open', NOW - BREAKER_STALE_MS - 1)],
      { state: 'closed', since: null, openReplicas: 0 },
    ],
    [
      'an open breaker refreshed recently is live, since its opening',
      [change('r1', 'open', NOW - 600_000, NOW - 10_000)],
      { state: 'open', since: iso(NOW - 600_000), openReplicas: 1 },
    ],
  ])('%s', (_name, records, view) => {
    const states = new BreakerStates();
    records.forEach((r) => states.record(r));
    expect(states.view('d-1', NOW)).toEqual(view);
    expect(states.view('d-2', NOW)).toEqual({ state: 'closed', since: null, openReplicas: 0 });
  });
});
