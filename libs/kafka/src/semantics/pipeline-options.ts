import { DurableLater } from './durable-later';
import { IncomingRecord } from './records';

/**
 * Handles one record; a {@link DurableLater} answer frees its slot before its commit, a
 * `LaneHold` answer frees its slot but keeps its key's line waiting until it settles. A
 * handler may answer a DurableLater at once, not in a promise: the record then frees its slot
 * before the next one is admitted, and costs no turn of its own (a batched call's).
 */
export type PipelineHandler = (record: IncomingRecord) => Promise<unknown> | DurableLater;

/** What a pipeline asks of the consumer that feeds it. */
export interface PipelineControl {
  /** Commits `nextOffset` (the next record to consume) for the partition. */
  commit(nextOffset: string): Promise<void>;
  /** Stops fetching the partition, rewinds it to `offset`, and fetches again at `resumeAt`. */
  rewind(offset: string, resumeAt: number): void;
  /** Stops fetching the partition and rewinds it to `offset`, until `release`. */
  hold(offset: string): void;
  /** Fetches the held partition again. */
  release(): void;
  /** A handler threw on the record at `offset`; the pipeline rewinds to it after a back-off. */
  failed(offset: string, error: unknown): void;
}

/** How a partition's records are handled. */
export interface PipelineOptions {
  /**
   * Most records running at once. A record whose key has one running waits in that key's
   * line without a slot (the line runs in the slot of its first record); at most as many
   * again wait in lines.
   */
  readonly maxInFlight: number;
  /** When a record may be handled (epoch ms), or undefined when at once. */
  readonly dueAt: (record: IncomingRecord) => number | undefined;
  /**
   * A record due within this many ms is admitted at once and waits in memory until it is due;
   * a later one rewinds the partition, to be fetched again this long before it is due. Set it
   * to the consumer's fetch wait: a partition resumed while a fetch is waiting on the broker is
   * fetched only once that fetch returns, so resuming it early keeps its records on time.
   */
  readonly dueWindowMs: number;
  readonly now: () => number;
  /** Pause after a handler threw, before its record is handled again. */
  readonly failureBackoffMs: number;
  /** Longest a batch waits for a free slot before the partition is held instead. */
  readonly admissionWaitMs: number;
  /**
   * How long the lines may stay full, with records holding their lanes (`LaneHold`) and
   * no record finishing, before the oldest hold is asked to stop (`partition_full`): held
   * lanes must not stop every key of the partition. 5 s when not set.
   */
  readonly laneRoomWaitMs?: number;
  /**
   * Where an earlier pipeline of this partition in this process had finished (the offset after
   * its finished prefix, whose effects are durable), or undefined. The records before it that
   * the consumer fetches again (their commit was lost, as in a broker outage) are committed
   * without being handled a second time.
   */
  readonly finishedBefore?: () => bigint | undefined;
}
