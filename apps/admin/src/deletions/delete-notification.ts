import { HEADER, TOPIC } from '@app/contracts';
import type { OutgoingRecord } from '@app/kafka';

/** One delete notification to publish: its id is the message id receipts are found by. */
export interface DeleteNotification {
  readonly id: string;
  readonly sourceId: string;
  /** The one destination it is for: the router delivers it there alone. */
  readonly destinationId: string;
  readonly userId: string;
}

/**
 * The record of a delete notification on `sluice.calls.v1`, keyed and headed as ingest
 * keys and heads calls (`sourceId:userId`; source, type and message id headers). Its value
 * is the exact webhook body, `{"type":"delete","userId":...,"timestamp":...}`: no `version`,
 * no `messageId` (docs/architecture.md, "Delivery semantics"). Delete notifications ignore the integrations object,
 * so there is no verdict header; the destination header names the one destination it is for
 * (a source may have several, each with its own receipt).
 * @param timestamp the deletion request's creation time, ISO 8601 UTC
 */
export function deleteRecord(n: DeleteNotification, timestamp: string): OutgoingRecord {
  return {
    topic: TOPIC.calls,
    key: `${n.sourceId}:${n.userId}`,
    value: JSON.stringify({ type: 'delete', userId: n.userId, timestamp }),
    headers: {
      [HEADER.sourceId]: n.sourceId,
      [HEADER.callType]: 'delete',
      [HEADER.messageId]: n.id,
      [HEADER.destinationId]: n.destinationId,
      [HEADER.userId]: n.userId,
    },
  };
}
