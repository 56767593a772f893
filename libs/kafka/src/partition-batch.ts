import { IncomingRecord } from './records';
import { Semaphore } from './semaphore';

/** Why processing of a partition's batch stopped before its end. */
export type BatchStop =
  /** The record is not due yet: pause the partition until `dueAt`, then resume from it. */
  | { readonly kind: 'not-due'; readonly offset: string; readonly dueAt: number }
  /** A handler threw (an infrastructure fault): back off, then resume from `offset`. */
  | { readonly kind: 'failed'; readonly offset: string; readonly error: unknown };

/** What became of one partition's batch. */
export interface BatchOutcome {
  /** Offset of the last record of the finished prefix; null when none finished. */
  readonly lastFinished: string | null;
  /** Set when some records were left for later. */
  readonly stop?: BatchStop;
}

/** How a partition's batch is processed. */
export interface PartitionBatchOptions {
  /** Most handler calls in flight for this partition. */
  readonly maxInFlight: number;
  /** When a record may be handled (epoch ms), or undefined when at once. */
  readonly dueAt: (record: IncomingRecord) => number | undefined;
  readonly now: () => number;
  /** Called after each finished record (kafkajs heartbeats are throttled internally). */
  readonly onProgress?: () => Promise<void>;
}

/**
 * Processes one partition's records with bounded concurrency while keeping the order of
 * records that share a key (records without a key are independent). Stops scheduling at
 * the first record that is not due, and after a handler throws. Returns the finished
 * prefix, which is all that may be committed: a record after a gap is processed again
 * later (at least once).
 */
export async function processPartitionBatch(
  records: readonly IncomingRecord[],
  handle: (record: IncomingRecord) => Promise<void>,
  options: PartitionBatchOptions,
): Promise<BatchOutcome> {
  const finished = new Array<boolean>(records.length).fill(false);
  const slots = new Semaphore(options.maxInFlight);
  const lanes = new Map<string, Promise<void>>();
  const tasks: Promise<void>[] = [];
  let failure: { index: number; error: unknown } | undefined;
  let notDue: { index: number; dueAt: number } | undefined;

  for (let index = 0; index < records.length; index += 1) {
    const record = records[index];
    const dueAt = options.dueAt(record);
    if (dueAt !== undefined && dueAt > options.now()) {
      notDue = { index, dueAt };
      break;
    }
    const run = async (): Promise<void> => {
      await slots.acquire();
      try {
        if (failure) return;
        await handle(record);
        finished[index] = true;
        await options.onProgress?.();
      } catch (error) {
        if (!failure || index < failure.index) failure = { index, error };
      } finally {
        slots.release();
      }
    };
    const lane = record.key ? record.key.toString('latin1') : undefined;
    const task = lane === undefined ? run() : (lanes.get(lane) ?? Promise.resolve()).then(run);
    if (lane !== undefined) lanes.set(lane, task);
    tasks.push(task);
    // Yield once slots are full, so scheduling does not run far ahead of failures.
    if (slots.full()) await slots.whenFree();
    if (failure) break;
  }
  await Promise.all(tasks);
  return outcome(records, finished, failure, notDue);
}

function outcome(
  records: readonly IncomingRecord[],
  finished: readonly boolean[],
  failure: { index: number; error: unknown } | undefined,
  notDue: { index: number; dueAt: number } | undefined,
): BatchOutcome {
  let prefix = 0;
  while (prefix < records.length && finished[prefix]) prefix += 1;
  const lastFinished = prefix > 0 ? records[prefix - 1].offset : null;
  if (prefix === records.length) return { lastFinished };
  const offset = records[prefix].offset;
  if (failure) return { lastFinished, stop: { kind: 'failed', offset, error: failure.error } };
  if (notDue) return { lastFinished, stop: { kind: 'not-due', offset, dueAt: notDue.dueAt } };
  // Unreachable: every scheduled record either finished or recorded a failure.
  return {
    lastFinished,
    stop: { kind: 'failed', offset, error: new Error('record left unfinished') },
  };
}
