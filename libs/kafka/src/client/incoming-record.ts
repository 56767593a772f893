import type { KafkaMessage } from 'kafkajs';

import { IncomingRecord, normalizeHeaders } from '../semantics/records';

/** A message kafkajs fetched, as the record handlers and readers see it. */
export function incomingRecord(
  topic: string,
  partition: number,
  message: KafkaMessage,
): IncomingRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    headers: normalizeHeaders(message.headers),
    timestamp: Number(message.timestamp),
  };
}
