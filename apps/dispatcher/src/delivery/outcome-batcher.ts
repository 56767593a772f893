import { HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, DurableLater, OutgoingRecord } from '@app/kafka';

/** Most outcomes in one record. */
export const MAX_OUTCOMES_PER_RECORD = 500;
/**
 * Most bytes (UTF-8) of one record's value, and of the records of one produce: a produce's
 * records may all land on one partition, and Kafka refuses a partition's batch over a megabyte
 * by default. The produce's bound is in bytes, not records: a batching destination's records
 * are full at 500 outcomes of a few dozen bytes each, and a backlog of them must not go three
 * small records to a round trip (bench/DISPATCHER.md).
 */
export const MAX_OUTCOME_RECORD_BYTES = 256 * 1024;
export const MAX_OUTCOME_SEND_BYTES = 3 * MAX_OUTCOME_RECORD_BYTES;
/**
 * How long a record not yet full gathers outcomes before it is produced. Nothing waits on it
 * but the deliveries' offset commits (their slots are free already), and every produce costs
 * the dispatcher as much CPU whether its record holds ten outcomes or five hundred.
 */
export const OUTCOME_LINGER_MS = 50;

/** The outcomes of one record to be, and the one wait all their deliveries share. */
interface Batch {
  readonly parts: string[];
  /** Outcomes in its parts (a batch outcome stands for each of its calls'). */
  count: number;
  /** Its value's length in UTF-8 bytes. */
  bytes: number;
  /** When its first outcome came (performance.now() ms). */
  readonly startedAt: number;
  readonly sent: DurableLater;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Gathers the ledger's outcomes into few records: everything added within a linger, or while
 * a produce is on its way, goes into the next one, as JSON arrays. A record per outcome cost
 * about as much CPU as the delivery itself (kafkajs's per-message send path); a record per
 * batch costs a fraction of that. `add` answers the wait for Kafka's acknowledgement of the outcome's record (one
 * per record, shared by its outcomes), so the delivery's offset is committed only after that;
 * a refused produce fails every outcome of it.
 */
export class OutcomeBatcher {
  /** Full records waiting for a produce, then the one still filling. */
  private readonly full: Batch[] = [];
  private filling: Batch | undefined;
  private producing = false;
  /** Ends the drain's linger early: a record filled up meanwhile. */
  private wake: (() => void) | undefined;

  constructor(
    private readonly producer: Pick<BatchProducer, 'send'>,
    private readonly lingerMs = OUTCOME_LINGER_MS,
  ) {}

  /**
   * Adds one outcome's JSON (see `outcomeJson`), or a batch outcome's that stands for `count`
   * outcomes (see `batchOutcomeJson`).
   */
  add(json: string, count = 1): DurableLater {
    const bytes = Buffer.byteLength(json) + 1;
    let batch = this.filling;
    if (
      batch === undefined ||
      (batch.count > 0 && batch.count + count > MAX_OUTCOMES_PER_RECORD) ||
      batch.bytes + bytes > MAX_OUTCOME_RECORD_BYTES
    ) {
      if (batch !== undefined) {
        this.full.push(batch);
        this.wake?.();
      }
      batch = this.filling = newBatch();
    }
    batch.parts.push(json);
    batch.count += count;
    batch.bytes += bytes;
    if (!this.producing) {
      this.producing = true;
      void this.drain();
    }
    return batch.sent;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Full records go at once; the one filling gets the rest of its linger (at least the
      // rest of this tick) first.
      if (this.full.length === 0 && this.filling !== undefined) {
        await this.linger(this.filling.startedAt + this.lingerMs - performance.now());
      }
      const batches = this.nextSend();
      if (batches.length === 0) break;
      try {
        await this.producer.send(batches.map(outcomesRecord));
        for (const batch of batches) batch.resolve();
      } catch (error) {
        for (const batch of batches) batch.reject(error);
      }
    }
    this.producing = false;
  }

  /**
   * The next produce's records: full ones first, then the one filling, within the bytes; at
   * least one (a record over the bound alone, say one outcome longer than it, goes by itself).
   */
  private nextSend(): Batch[] {
    const waiting = this.filling === undefined ? this.full : [...this.full, this.filling];
    let bytes = 0;
    let taken = 0;
    while (taken < waiting.length) {
      bytes += waiting[taken].bytes;
      if (taken > 0 && bytes > MAX_OUTCOME_SEND_BYTES) break;
      taken += 1;
    }
    const batches = this.full.splice(0, taken);
    if (taken > batches.length) {
      batches.push(this.filling!);
      this.filling = undefined;
    }
    return batches;
  }

  /** Waits `ms` (at least the rest of this tick), or until a record fills up. */
  private linger(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms >= 1 ? setTimeout(() => this.wake?.(), ms) : undefined;
      const immediate = timer === undefined ? setImmediate(() => this.wake?.()) : undefined;
      this.wake = () => {
        clearTimeout(timer);
        clearImmediate(immediate);
        this.wake = undefined;
        resolve();
      };
    });
  }
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const sent = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // A DurableLater handles a rejection once: a delivery may stop waiting on it (its own
  // produce failed first).
  return {
    parts: [],
    count: 0,
    bytes: 2,
    startedAt: performance.now(),
    sent: new DurableLater(sent),
    resolve,
    reject,
  };
}

/** One record of several outcomes; no key, so the records spread over the partitions. */
function outcomesRecord(batch: Batch): OutgoingRecord {
  return {
    topic: TOPIC.deliveryOutcomes,
    key: null,
    value: `[${batch.parts.join(',')}]`,
    headers: { [HEADER.outcomeCount]: String(batch.count) },
  };
}
