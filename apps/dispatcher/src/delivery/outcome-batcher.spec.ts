import { DeliveryOutcome, HEADER, parseDeliveryOutcomes, TOPIC } from '@app/contracts';
import { OutgoingRecord } from '@app/kafka';

import {
  MAX_OUTCOME_RECORD_BYTES,
  MAX_OUTCOME_SEND_BYTES,
  MAX_OUTCOMES_PER_RECORD,
  OutcomeBatcher,
} from './outcome-batcher';

/** An outcome's JSON, as the batcher takes it. */
function outcome(i: number, detail = ''): string {
  const value: DeliveryOutcome = {
    deliveryId: `d-${i}`,
    messageId: `m-${i}`,
    sourceId: 's',
    destinationId: 'dest',
    type: 'track',
    result: 'delivered',
    attempts: 1,
    at: '2030-01-01T00:00:00.000Z',
    ...(detail ? { reason: detail } : {}),
  };
  return JSON.stringify(value);
}

/** Records each produce; resolves or rejects as told, or once released when `gated`. */
class FakeProducer {
  readonly sends: OutgoingRecord[][] = [];
  failure?: Error;
  gated = false;
  private readonly gates: (() => void)[] = [];

  send(records: readonly OutgoingRecord[]): Promise<void> {
    this.sends.push([...records]);
    if (this.gated) return new Promise((resolve) => this.gates.push(resolve));
    return this.failure ? Promise.reject(this.failure) : Promise.resolve();
  }

  release(): void {
    this.gated = false;
    for (const open of this.gates.splice(0)) open();
  }
}

const valueBytes = (record: OutgoingRecord) => Buffer.byteLength(record.value);

const ids = (records: OutgoingRecord[]) =>
  records.flatMap((r) =>
    parseDeliveryOutcomes(r.value as string)!.outcomes.map((o) => o.messageId),
  );

describe(OutcomeBatcher.name, () => {
  it('sends the outcomes of one tick as one unkeyed record with their count', async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer);
    await Promise.all([0, 1, 2].map((i) => batcher.add(outcome(i)).durable));
    expect(producer.sends).toHaveLength(1);
    const [record] = producer.sends[0];
    expect(record).toMatchObject({ topic: TOPIC.deliveryOutcomes, key: null });
    expect(record.headers).toEqual({ [HEADER.outcomeCount]: '3' });
    expect(ids([record])).toEqual(['m-0', 'm-1', 'm-2']);
  });

  it("counts a batch outcome's calls, and starts a record where they would pass the most", async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer);
    const batch = (n: number) => JSON.stringify({ destinationId: 'dest', calls: Array(n) });
    await Promise.all([
      batcher.add(outcome(0)).durable,
      batcher.add(batch(100), 100).durable,
      batcher.add(batch(MAX_OUTCOMES_PER_RECORD), MAX_OUTCOMES_PER_RECORD).durable,
    ]);
    expect(producer.sends[0].map((r) => r.headers?.[HEADER.outcomeCount])).toEqual([
      '101',
      String(MAX_OUTCOMES_PER_RECORD),
    ]);
  });

  it('gathers the outcomes of its linger into one record; a full record goes at once', async () => {
    jest.useFakeTimers();
    try {
      const producer = new FakeProducer();
      const batcher = new OutcomeBatcher(producer, 50);
      const first = batcher.add(outcome(0)).durable;
      await jest.advanceTimersByTimeAsync(30);
      const second = batcher.add(outcome(1)).durable;
      await jest.advanceTimersByTimeAsync(19);
      expect(producer.sends).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      await Promise.all([first, second]);
      expect(producer.sends.map(ids)).toEqual([['m-0', 'm-1']]);

      const many = Array.from({ length: MAX_OUTCOMES_PER_RECORD + 1 }, (_, i) =>
        batcher.add(outcome(10 + i)),
      );
      await jest.advanceTimersByTimeAsync(0);
      // The full record went without waiting for the linger, the one filling beside it.
      expect(producer.sends).toHaveLength(2);
      expect(producer.sends[1].map((r) => r.headers?.[HEADER.outcomeCount])).toEqual([
        String(MAX_OUTCOMES_PER_RECORD),
        '1',
      ]);
      await Promise.all(many.map((m) => m.durable));
    } finally {
      jest.useRealTimers();
    }
  });

  it('bounds outcomes per record, bytes per record and records per produce', async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer);
    // Two bytes a character in UTF-8: bounded by characters, records would be twice the bytes.
    const big = 'é'.repeat(MAX_OUTCOME_RECORD_BYTES / 6);
    const count = MAX_OUTCOMES_PER_RECORD * 3 + 10;
    await Promise.all([
      ...Array.from({ length: count }, (_, i) => batcher.add(outcome(i)).durable),
      ...Array.from({ length: 16 }, (_, i) => batcher.add(outcome(count + i, big)).durable),
    ]);
    const records = producer.sends.flat();
    for (const send of producer.sends) {
      const bytes = send.reduce((sum, record) => sum + valueBytes(record), 0);
      expect(bytes).toBeLessThanOrEqual(MAX_OUTCOME_SEND_BYTES);
    }
    expect(producer.sends.some((send) => send.length > 1)).toBe(true);
    for (const record of records) {
      expect(valueBytes(record)).toBeLessThanOrEqual(MAX_OUTCOME_RECORD_BYTES);
      expect(Number(record.headers?.[HEADER.outcomeCount])).toBeLessThanOrEqual(
        MAX_OUTCOMES_PER_RECORD,
      );
    }
    expect(ids(records)).toEqual(Array.from({ length: count + 16 }, (_, i) => `m-${i}`));
  });

  it('sends a backlog of small full records in one produce, within its bytes', async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer, 0);
    const tiny = (i: number) => JSON.stringify({ destinationId: 'dest', calls: [i] });
    producer.gated = true;
    const first = batcher.add(outcome(0)).durable;
    await new Promise((resolve) => setImmediate(resolve));
    expect(producer.sends).toHaveLength(1);
    // While the first produce is on its way, ten batch outcomes fill a record each.
    const backlog = Array.from({ length: 10 }, (_, i) =>
      batcher.add(tiny(i), MAX_OUTCOMES_PER_RECORD),
    );
    producer.release();
    await Promise.all([first, ...backlog.map((wait) => wait.durable)]);
    expect(producer.sends.map((send) => send.length)).toEqual([1, 10]);
  });

  it('sends an outcome longer than a produce may be alone, and goes on after it', async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer, 0);
    const huge = outcome(1, 'x'.repeat(MAX_OUTCOME_SEND_BYTES));
    producer.gated = true;
    const first = batcher.add(outcome(0)).durable;
    await new Promise((resolve) => setImmediate(resolve));
    const later = [batcher.add(huge).durable, batcher.add(outcome(2)).durable];
    producer.release();
    await Promise.all([first, ...later]);
    expect(producer.sends.map(ids)).toEqual([['m-0'], ['m-1'], ['m-2']]);
  });

  it('rejects every outcome of a refused produce, and sends later ones anew', async () => {
    const producer = new FakeProducer();
    const batcher = new OutcomeBatcher(producer);
    producer.failure = new Error('refused');
    const refused = [batcher.add(outcome(0)).durable, batcher.add(outcome(1)).durable];
    for (const one of refused) await expect(one).rejects.toThrow('refused');
    producer.failure = undefined;
    await expect(batcher.add(outcome(2)).durable).resolves.toBeUndefined();
    expect(ids(producer.sends.at(-1)!)).toEqual(['m-2']);
  });
});
