/**
 * Why a pipeline asks a held record to stop holding its lane:
 * - `pending`: as many records of its key wait behind it as the hold allows (`maxWaiting`);
 * - `partition_full`: the partition's lines are full and nothing has finished for a while, so
 *   the held lanes stop every key of the partition: the oldest hold is asked to end;
 * - `abandon`: the pipeline is gone (rebalance, close, an earlier record's failure): the record
 *   will be read again from the last commit, so the handler stops without any effect and its
 *   answer is ignored.
 */
export type HoldStopReason = 'pending' | 'partition_full' | 'abandon';

/**
 * What a handler may answer when its record is not done but must keep its key's order while
 * it waits (a delivery retried in place): its slot is freed at once, its key's later records
 * keep waiting in their line, and its offset is not committed, until `settled` resolves with
 * the record's final answer (anything a handler may answer but another LaneHold; a
 * {@link DurableLater} then waits as usual). A rejection counts as the handler's failure.
 * The pipeline may ask the handler to end the hold early through `stop`; for any reason but
 * `abandon` the handler must then settle soon (e.g. moving the record elsewhere).
 */
export class LaneHold {
  constructor(
    readonly settled: Promise<unknown>,
    readonly stop: (reason: HoldStopReason) => void,
    /** Most records of its key that may wait behind it before it is asked to stop. */
    readonly maxWaiting: number,
  ) {
    // Handled from here on: it may settle before the pipeline waits on it.
    settled.catch(() => undefined);
  }
}
