/** A circuit breaker's state: closed (attempts go out), open (none), half-open (probes). */
export type BreakerStateName = 'closed' | 'open' | 'half_open';

const STATES: readonly string[] = ['closed', 'open', 'half_open'];

/**
 * One record of `sluice.breaker.changes.v1`: a destination's breaker in one dispatcher process
 * (`replica`) is in `state`; `since` is when it last left closed (its open and half-open turns
 * alike) or, closed, when it closed; `at` is when the record was made (a breaker that is
 * not closed is published again from time to time, so a reader can tell a live replica's
 * state from that of a replica gone since). Times are epoch ms.
 */
export interface BreakerChangeRecord {
  readonly destinationId: string;
  readonly replica: string;
  readonly state: BreakerStateName;
  readonly since: number;
  readonly at: number;
}

/** The record's value, JSON. */
export function breakerChangeJson(record: BreakerChangeRecord): string {
  return JSON.stringify(record);
}

/** A record's value read back; undefined when it is not one. */
export function parseBreakerChange(value: Buffer | string | null): BreakerChangeRecord | undefined {
  if (value === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString());
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const r = parsed as Record<string, unknown>;
  if (typeof r.destinationId !== 'string' || typeof r.replica !== 'string') return undefined;
  if (typeof r.state !== 'string' || !STATES.includes(r.state)) return undefined;
  if (typeof r.since !== 'number' || typeof r.at !== 'number') return undefined;
  return {
    destinationId: r.destinationId,
    replica: r.replica,
    state: r.state as BreakerStateName,
    since: r.since,
    at: r.at,
  };
}
