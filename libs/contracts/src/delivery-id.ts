import { createHash } from 'node:crypto';

/** Longest event name carried in a record header; a longer one is cut. */
export const MAX_EVENT_HEADER_CHARS = 200;

/**
 * A delivery's id when its record carries none: derived from its destination and message id,
 * so every attempt of a delivery (and a duplicate of its call) maps to one ledger row without
 * a header written by the router. UUID-shaped (version 5 style, SHA-1 based).
 */
export function deliveryIdFor(destinationId: string, messageId: string): string {
  const hash = createHash('sha1').update(`${destinationId}\n${messageId}`).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
