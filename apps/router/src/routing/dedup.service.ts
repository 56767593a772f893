import { Inject, Injectable, Logger } from '@nestjs/common';

import { HEADER } from '@app/contracts';
import { IncomingRecord, PartitionRange } from '@app/kafka';

import { RouterMetrics } from './router.metrics';
import { fingerprint, SeenVerdict, SeenWindow } from './seen-set';

/** The fingerprints-held gauge is set every this many checks (a sum over the partitions). */
const GAUGE_EVERY = 1_024;

/** How the de-duplication is set up. */
export interface DedupOptions {
  /** How long a (source, user, messageId) is remembered, by record time; 0 turns it off. */
  readonly windowMs: number;
  /** The fingerprint's two hash seeds (random per process). */
  readonly seeds: readonly [number, number];
}

/** Injection token of the {@link DedupOptions}. */
export const DEDUP_OPTIONS = Symbol('DEDUP_OPTIONS');

/**
 * The calls topic's recent records of some partitions, read back from Kafka: those with a
 * time of at least `sinceMs` in each range, handed over a batch at a time.
 */
export interface CallHistory {
  read(
    sinceMs: number,
    ranges: readonly PartitionRange[],
    onRecords: (records: IncomingRecord[]) => void,
  ): Promise<number>;
}

/** Injection token of the {@link CallHistory}. */
export const CALL_HISTORY = Symbol('CALL_HISTORY');

/** What one partition of the calls topic holds. */
interface PartitionSeen {
  readonly seen: SeenWindow;
  /** The offset after every record checked or read back: what is known stops there. */
  through: number | undefined;
  /**
   * False after a rebalance until the partition's next record: if it comes after `through`,
   * another member handled the records between, and they are read back first.
   */
  verified: boolean;
  /** A read back in progress; every check of the partition waits for it. */
  loading?: Promise<void>;
}

/**
 * De-duplicates calls by (source, user, messageId) per partition of the calls topic, within a
 * window of record time. A client sends a retried call with the same key (source and user), so
 * it lands on its first copy's partition, and the partition's owner alone decides. What a
 * partition saw is rebuilt from Kafka, never from PostgreSQL: the first time a process meets
 * a partition it reads the partition back from the window's start to the record at hand, and
 * after a rebalance it reads what another member handled meanwhile (the gap between what it
 * knew and where the partition resumes).
 */
@Injectable()
export class DedupService {
  private readonly logger = new Logger(DedupService.name);
  private readonly partitions = new Map<number, PartitionSeen>();
  /** The partitions assigned at the last rebalance seen; undefined while unknown. */
  private assigned: ReadonlySet<number> | undefined;
  private readonly print = new Uint32Array(2);
  private checks = 0;

  constructor(
    @Inject(DEDUP_OPTIONS) private readonly options: DedupOptions,
    @Inject(CALL_HISTORY) private readonly history: CallHistory,
    private readonly metrics: RouterMetrics,
  ) {}

  /** Whether calls are de-duplicated at all. */
  get enabled(): boolean {
    return this.options.windowMs > 0;
  }

  /** Fingerprints held over all partitions. */
  get size(): number {
    let size = 0;
    for (const p of this.partitions.values()) size += p.seen.size;
    return size;
  }

  /**
   * After a rebalance: forgets the partitions no longer assigned (all are kept when the
   * assignment is unknown), and checks the others again on their next record.
   */
  rebalanced(assigned: ReadonlySet<number> | undefined): void {
    this.assigned = assigned;
    for (const [partition, state] of this.partitions) {
      if (assigned !== undefined && !assigned.has(partition)) this.partitions.delete(partition);
      else state.verified = false;
    }
  }

  /**
   * Checks a call record, reading its partition back first when needed.
   * @returns the verdict; a record without source or message id is always 'first'
   * @throws when the read back failed (Kafka down): the record is tried again later
   */
  async check(record: IncomingRecord): Promise<SeenVerdict> {
    const caller = callerOf(record);
    const messageId = record.headers[HEADER.messageId];
    if (!this.enabled || caller === undefined || messageId === undefined) return 'first';
    // A record still finishing from a partition given away: its new owner handles it again
    // anyway (its offset is not committed from here), so reading the partition back is waste.
    if (this.assigned !== undefined && !this.assigned.has(record.partition)) return 'first';
    const state = this.partition(record);
    if (state.loading !== undefined) await state.loading;
    const offset = Number(record.offset);
    fingerprint(this.options.seeds, caller, messageId, this.print);
    const verdict = state.seen.check(this.print[0], this.print[1], offset, record.timestamp);
    if (state.through === undefined || offset + 1 > state.through) state.through = offset + 1;
    if (++this.checks % GAUGE_EVERY === 0) this.metrics.dedupEntries.set(this.size);
    return verdict;
  }

  /** The partition's state, with a read back started when the record shows a gap. */
  private partition(record: IncomingRecord): PartitionSeen {
    let state = this.partitions.get(record.partition);
    if (state === undefined) {
      state = { seen: new SeenWindow(this.options.windowMs), through: undefined, verified: false };
      this.partitions.set(record.partition, state);
    }
    if (state.verified) return state;
    state.verified = true;
    const offset = Number(record.offset);
    const known = state.through;
    if (known !== undefined && offset <= known) return state;
    state.through = offset;
    const range: PartitionRange = {
      partition: record.partition,
      fromOffset: known === undefined ? undefined : BigInt(known),
      toOffset: BigInt(offset),
    };
    // A read already on its way (an earlier gap) finishes first, failed or not.
    const previous = (state.loading ?? Promise.resolve()).catch(() => undefined);
    const loading = previous
      .then(() => this.readBack(state, range, record.timestamp - this.options.windowMs))
      .catch((error: unknown) => {
        // Unknown again: the next record (this one, retried) reads the gap anew.
        state.verified = false;
        state.through = known;
        throw error;
      })
      .finally(() => {
        if (state.loading === loading) state.loading = undefined;
      });
    state.loading = loading;
    return state;
  }

  private async readBack(
    state: PartitionSeen,
    range: PartitionRange,
    sinceMs: number,
  ): Promise<void> {
    const started = Date.now();
    const print = new Uint32Array(2);
    const read = await this.history.read(sinceMs, [range], (records) => {
      for (const record of records) {
        const caller = callerOf(record);
        const messageId = record.headers[HEADER.messageId];
        if (caller === undefined || messageId === undefined) continue;
        fingerprint(this.options.seeds, caller, messageId, print);
        state.seen.check(print[0], print[1], Number(record.offset), record.timestamp);
      }
    });
    this.metrics.dedupEntries.set(this.size);
    this.metrics.dedupReadBack.inc(read);
    this.logger.log(
      `partition ${range.partition}: read back ${read} call(s) before offset ${range.toOffset} ` +
        `in ${Date.now() - started} ms`,
    );
  }
}

/**
 * Whose call a record is: its key, `sourceId:userKey` (ingest and the admin app key every call
 * so), else its source id. With the messageId it makes the de-duplication key (source, user,
 * messageId): two users' calls sharing a messageId are both routed.
 */
function callerOf(record: IncomingRecord): Buffer | undefined {
  return record.key ?? record.headers[HEADER.sourceId];
}
