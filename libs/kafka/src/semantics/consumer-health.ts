/**
 * Where a consumer is in its life: `joining` its group (at start, or after kafkajs or the
 * transport restarted it), `consuming` once it has joined, `restarting` after a crash until it
 * joins again, `stopped` once closed (or given up on).
 */
export type ConsumerState = 'joining' | 'consuming' | 'restarting' | 'stopped';

/** One consumer group's state, for readiness. */
export interface ConsumerStatus {
  readonly groupId: string;
  readonly state: ConsumerState;
}

/**
 * The consumers of one app process, each reporting its state ({@link KafkaTransport} tracks
 * itself here when given one): readiness asks whether all of them are consuming.
 */
export class ConsumerHealth {
  private readonly sources = new Set<() => ConsumerStatus>();

  /** Adds a consumer; `status` is asked on every readiness check. */
  track(status: () => ConsumerStatus): void {
    this.sources.add(status);
  }

  /** Every tracked consumer's state now. */
  statuses(): ConsumerStatus[] {
    return [...this.sources].map((status) => status());
  }

  /** The consumers that are not consuming now (none when every one is, or none is tracked). */
  notConsuming(): ConsumerStatus[] {
    return this.statuses().filter((status) => status.state !== 'consuming');
  }
}
