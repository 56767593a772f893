import { HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, DurableLater, OutgoingRecord } from '@app/kafka';

/** Most outcomes in one record. */
export const MAX_OUTCOMES_PER_RECORD = 500;
/**
 * Most bytes of one record's value, and records per produce: a produce's records may all
 * land on one partition, and Kafka refuses a partition's batch over a megabyte by default.
 */
export const MAX_OUTCOME_RECORD_BYTES = 256 * 1024;
export const MAX_OUTCOME_RECORDS_PER_SEND = 3;
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
    let batch = this.filling;
    if (
      batch === undefined ||
      (batch.count > 0 && batch.count + count > MAX_OUTCOMES_PER_RECORD) ||
      batch.bytes + json.length + 1 > MAX_OUTCOME_RECORD_BYTES
    ) {
      if (batch !== undefined) {
        this.full.push(batch);
        this.wake?.();
      }
      batch = this.filling = newBatch();
    }
    batch.parts.push(json);
    batch.count += count;
    batch.bytes += json.length + 1;
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
      const batches = this.full.splice(0, MAX_OUTCOME_RECORDS_PER_SEND);
      if (batches.length < MAX_OUTCOME_RECORDS_PER_SEND && this.filling !== undefined) {
        batches.push(this.filling);
        this.filling = undefined;
      }
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
