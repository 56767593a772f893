import { QueuedCall } from './calls';
import { MAX_REQUEST_BYTES } from './limits';

/** `sentAt` as `Date.toISOString` writes it: always 24 characters for years 0 to 9999. */
const SENT_AT_SAMPLE = '2000-01-01T00:00:00.000Z';
/** Bytes of a request body around its calls and the commas between them. */
const ENVELOPE_BYTES = Buffer.byteLength(batchBody([], SENT_AT_SAMPLE));

/**
 * Removes the next request's calls from the front of `queue`: at most `maxCalls`, and no
 * more than fit a body of `maxBytes`. Never empty while the queue is not, since one call
 * (at most `MAX_CALL_BYTES`) always fits.
 */
export function takeBatch(
  queue: QueuedCall[],
  maxCalls: number,
  maxBytes: number = MAX_REQUEST_BYTES,
): QueuedCall[] {
  let count = 0;
  let bytes = ENVELOPE_BYTES;
  while (count < queue.length && count < maxCalls) {
    const next = bytes + queue[count].bytes + (count > 0 ? 1 : 0);
    if (next > maxBytes && count > 0) break;
    bytes = next;
    count++;
  }
  return queue.splice(0, count);
}

/** The request body: `{"batch":[...],"sentAt":"..."}`, from the calls' JSON as queued. */
export function batchBody(calls: readonly QueuedCall[], sentAt: string): string {
  return `{"batch":[${calls.map((call) => call.json).join(',')}],"sentAt":${JSON.stringify(sentAt)}}`;
}
