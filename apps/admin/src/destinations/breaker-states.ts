import type { BreakerChangeRecord, BreakerStateName } from '@app/contracts';

/**
 * A replica whose breaker is not closed publishes it again every 30 s; one silent for this
 * long is taken as gone (stopped, or crashed) and its state as void.
 */
export const BREAKER_STALE_MS = 90_000;

/** A destination's breaker as the admin API shows it, over every dispatcher replica. */
export interface BreakerView {
  /** `open` when any replica has it open, else `half_open` when any probes, else `closed`. */
  readonly state: BreakerStateName;
  /** Since when (ISO 8601): the earliest opening among replicas not closed, else the latest closing; null when none was seen. */
  readonly since: string | null;
  /** Replicas whose breaker of this destination is open or half-open. */
  readonly openReplicas: number;
}

/**
 * The latest record of each (destination, dispatcher replica), in memory, from
 * `sluice.breaker.changes.v1`. Records may come in any order across partitions' replays: the
 * newest (`at`) wins.
 */
export class BreakerStates {
  private readonly latest = new Map<string, Map<string, BreakerChangeRecord>>();

  record(change: BreakerChangeRecord): void {
    let replicas = this.latest.get(change.destinationId);
    if (!replicas) {
      replicas = new Map();
      this.latest.set(change.destinationId, replicas);
    }
    const known = replicas.get(change.replica);
    if (known === undefined || known.at <= change.at) replicas.set(change.replica, change);
  }

  view(destinationId: string, now: number): BreakerView {
    const records = [...(this.latest.get(destinationId)?.values() ?? [])];
    const notClosed = records.filter((r) => r.state !== 'closed' && now - r.at <= BREAKER_STALE_MS);
    if (notClosed.length > 0) {
      const state = notClosed.some((r) => r.state === 'open') ? 'open' : 'half_open';
      const since = Math.min(...notClosed.map((r) => r.since));
      return { state, since: new Date(since).toISOString(), openReplicas: notClosed.length };
    }
    const closed = records.filter((r) => r.state === 'closed');
    const since = closed.length > 0 ? Math.max(...closed.map((r) => r.since)) : undefined;
    return {
      state: 'closed',
      since: since === undefined ? null : new Date(since).toISOString(),
      openReplicas: 0,
    };
  }
}
