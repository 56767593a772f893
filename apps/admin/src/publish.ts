import type { BatchProducer, OutgoingRecord } from '@app/kafka';

/** Records handed to the producer in one `send`. */
export const PUBLISH_CHUNK_RECORDS = 5_000;
/** Sends in flight at once: enough to keep the producer's pipeline full, bounded in memory. */
const PUBLISH_WINDOW = 4;

/**
 * Sends records in chunks, a few chunks in flight at once, and resolves once Kafka
 * acknowledged every one (acks=all); rejects with the first failure, after every send in
 * flight has settled (no rejection is left unhandled). Chunks keep each send well within
 * the producer's send timeout, however many records there are.
 */
export async function publishAll(
  producer: Pick<BatchProducer, 'send'>,
  records: readonly OutgoingRecord[],
  chunkRecords = PUBLISH_CHUNK_RECORDS,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for (let start = 0; start < records.length && !failure; start += chunkRecords) {
    const tracked: Promise<void> = producer
      .send(records.slice(start, start + chunkRecords))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= PUBLISH_WINDOW) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
}
