import { deliveryIdFor, HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord, OutgoingRecord } from '@app/kafka';

/**
 * The headers a replay keeps from its dead letter: what the delivery is. The attempt count,
 * first-attempt and due times, webhook subset, reason and last status are dropped, so the
 * replay starts a fresh retry window covering every current webhook.
 */
const KEPT_HEADERS = [
  HEADER.sourceId,
  HEADER.callType,
  HEADER.messageId,
  HEADER.destinationId,
  HEADER.event,
] as const;

/** The id of the delivery a dead letter is, as the dispatcher gave it; undefined if unknowable. */
export function deadLetterDeliveryId(record: IncomingRecord): string | undefined {
  const id = headerText(record, HEADER.deliveryId);
  if (id) return id;
  const destinationId = headerText(record, HEADER.destinationId);
  const messageId = headerText(record, HEADER.messageId);
  return destinationId && messageId ? deliveryIdFor(destinationId, messageId) : undefined;
}

/**
 * A dead letter again on the deliveries topic: the same key and bytes, a new delivery id
 * (`deliveryId`) and the id of the delivery it replays (`replayOf`).
 */
export function replayRecord(
  dead: IncomingRecord,
  deliveryId: string,
  replayOf: string,
): OutgoingRecord {
  const headers: Record<string, Buffer | string> = {};
  for (const name of KEPT_HEADERS) {
    const value = dead.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  headers[HEADER.deliveryId] = deliveryId;
  headers[HEADER.replayOf] = replayOf;
  return { topic: TOPIC.deliveries, key: dead.key, value: dead.value ?? Buffer.alloc(0), headers };
}
