import { batchBody, takeBatch } from './batches';
import { QueuedCall } from './calls';
import { MAX_CALL_BYTES, MAX_REQUEST_BYTES } from './limits';

const SENT_AT = '2026-01-01T00:00:00.000Z';

/** A queued call whose JSON has exactly `bytes` bytes. */
function queued(seq: number, bytes: number): QueuedCall {
  const empty = JSON.stringify({ type: 'track', pad: '' });
  const json = JSON.stringify({ type: 'track', pad: 'x'.repeat(bytes - empty.length) });
  return { seq, type: 'track', messageId: `m-${seq}`, json, bytes: Buffer.byteLength(json) };
}

const queue = (count: number, bytes: number) =>
  Array.from({ length: count }, (_, i) => queued(i + 1, bytes));

describe(takeBatch.name, () => {
  it('takes at most maxCalls from the front, leaving the rest in order', () => {
    const calls = queue(5, 100);
    expect(takeBatch(calls, 3).map((c) => c.seq)).toEqual([1, 2, 3]);
    expect(calls.map((c) => c.seq)).toEqual([4, 5]);
    expect(takeBatch(calls, 3).map((c) => c.seq)).toEqual([4, 5]);
    expect(calls).toEqual([]);
  });

  it('cuts a batch so that its body stays within the request limit', () => {
    const calls = queue(40, MAX_CALL_BYTES);
    const batches: QueuedCall[][] = [];
    while (calls.length > 0) batches.push(takeBatch(calls, 1_000));
    for (const batch of batches) {
      expect(Buffer.byteLength(batchBody(batch, SENT_AT))).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    }
    // 15 calls of 32,768 bytes and their commas fit in 512,000 bytes; 16 would not.
    expect(batches.map((b) => b.length)).toEqual([15, 15, 10]);
  });

  it('fills a body up to the exact byte limit', () => {
    const overhead = Buffer.byteLength(batchBody([], SENT_AT));
    const calls = queue(3, 1_000);
    const limit = overhead + 2 * 1_000 + 1;
    expect(takeBatch(calls, 10, limit)).toHaveLength(2);
    expect(takeBatch(queue(3, 1_000), 10, limit - 1)).toHaveLength(1);
  });
});

describe(batchBody.name, () => {
  it('is the batch body of the tracking API, with sentAt', () => {
    const calls = [queued(1, 40), queued(2, 40)];
    expect(JSON.parse(batchBody(calls, SENT_AT))).toEqual({
      batch: calls.map((c): unknown => JSON.parse(c.json)),
      sentAt: SENT_AT,
    });
  });
});
