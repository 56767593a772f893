import { DeliveryOutcome, HEADER, TOPIC } from '@app/contracts';
import { BatchProducer, OutgoingRecord } from '@app/kafka';

/** Most outcomes in one record. */
export const MAX_OUTCOMES_PER_RECORD = 500;
/**
 * Most bytes of one record's value, and records per produce: a produce's records may all
 * land on one partition, and Kafka refuses a partition's batch over a megabyte by default.
 */
export const MAX_OUTCOME_RECORD_BYTES = 256 * 1024;
export const MAX_OUTCOME_RECORDS_PER_SEND = 3;

interface Entry {
  readonly json: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Gathers the ledger's outcomes into few records: everything added while a produce is on its
 * way goes into the next one, as JSON arrays. A record per outcome cost about as much CPU as
 * the delivery itself (kafkajs's per-message send path); a record per batch costs a fraction
 * of that. `add` resolves once Kafka acknowledged the outcome's record, so the delivery's
 * offset is committed only after that; a refused produce rejects every outcome of it.
 */
export class OutcomeBatcher {
  private queue: Entry[] = [];
  private producing = false;

  constructor(private readonly producer: Pick<BatchProducer, 'send'>) {}

  add(outcome: DeliveryOutcome): Promise<void> {
    const json = JSON.stringify(outcome);
    const done = new Promise<void>((resolve, reject) => this.queue.push({ json, resolve, reject }));
    if (!this.producing) {
      this.producing = true;
      // The rest of this tick's outcomes join the first record.
      setImmediate(() => void this.drain());
    }
    return done;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const { records, taken } = takeRecords(this.queue);
      const entries = this.queue.splice(0, taken);
      try {
        await this.producer.send(records);
        for (const entry of entries) entry.resolve();
      } catch (error) {
        for (const entry of entries) entry.reject(error);
      }
    }
    this.producing = false;
  }
}

/** Records of the queue's first outcomes, within the bounds; at least one outcome is taken. */
function takeRecords(queue: readonly Entry[]): { records: OutgoingRecord[]; taken: number } {
  const records: OutgoingRecord[] = [];
  let taken = 0;
  while (taken < queue.length && records.length < MAX_OUTCOME_RECORDS_PER_SEND) {
    const parts: string[] = [];
    let bytes = 2;
    while (taken < queue.length && parts.length < MAX_OUTCOMES_PER_RECORD) {
      const json = queue[taken].json;
      if (parts.length > 0 && bytes + json.length + 1 > MAX_OUTCOME_RECORD_BYTES) break;
      parts.push(json);
      bytes += json.length + 1;
      taken += 1;
    }
    records.push(outcomesRecord(parts));
  }
  return { records, taken };
}

/** One record of several outcomes; no key, so the records spread over the partitions. */
function outcomesRecord(parts: readonly string[]): OutgoingRecord {
  return {
    topic: TOPIC.deliveryOutcomes,
    key: null,
    value: `[${parts.join(',')}]`,
    headers: { [HEADER.outcomeCount]: String(parts.length) },
  };
}
