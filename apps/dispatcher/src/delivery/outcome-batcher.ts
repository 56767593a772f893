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

/** The outcomes of one record to be, and the one wait all their deliveries share. */
interface Batch {
  readonly parts: string[];
  bytes: number;
  readonly sent: DurableLater;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Gathers the ledger's outcomes into few records: everything added while a produce is on its
 * way goes into the next one, as JSON arrays. A record per outcome cost about as much CPU as
 * the delivery itself (kafkajs's per-message send path); a record per batch costs a fraction
 * of that. `add` answers the wait for Kafka's acknowledgement of the outcome's record (one
 * per record, shared by its outcomes), so the delivery's offset is committed only after that;
 * a refused produce fails every outcome of it.
 */
export class OutcomeBatcher {
  /** Full records waiting for a produce, then the one still filling. */
  private readonly full: Batch[] = [];
  private filling: Batch | undefined;
  private producing = false;

  constructor(private readonly producer: Pick<BatchProducer, 'send'>) {}

  /** Adds one outcome's JSON (see `outcomeJson`). */
  add(json: string): DurableLater {
    let batch = this.filling;
    if (
      batch === undefined ||
      batch.parts.length >= MAX_OUTCOMES_PER_RECORD ||
      batch.bytes + json.length + 1 > MAX_OUTCOME_RECORD_BYTES
    ) {
      if (batch !== undefined) this.full.push(batch);
      batch = this.filling = newBatch();
    }
    batch.parts.push(json);
    batch.bytes += json.length + 1;
    if (!this.producing) {
      this.producing = true;
      // The rest of this tick's outcomes join the first record.
      setImmediate(() => void this.drain());
    }
    return batch.sent;
  }

  private async drain(): Promise<void> {
    for (;;) {
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
  return { parts: [], bytes: 2, sent: new DurableLater(sent), resolve, reject };
}

/** One record of several outcomes; no key, so the records spread over the partitions. */
function outcomesRecord(batch: Batch): OutgoingRecord {
  return {
    topic: TOPIC.deliveryOutcomes,
    key: null,
    value: `[${batch.parts.join(',')}]`,
    headers: { [HEADER.outcomeCount]: String(batch.parts.length) },
  };
}
