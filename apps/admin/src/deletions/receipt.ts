import type { DeliveryResult } from '@app/contracts';
import type { DeletionNotificationStatus } from '@app/settings';

/** The receipt an outcome stands for: dead and discarded deliveries both failed. */
export function receiptOf(result: DeliveryResult): Exclude<DeletionNotificationStatus, 'pending'> {
  return result === 'delivered' ? 'delivered' : 'failed';
}

/**
 * The status a notification moves to on an outcome, or undefined when it stays as it is.
 * Outcomes come at least once and in any order: a duplicate changes nothing, and nothing
 * moves a delivered notification back (the endpoint did receive it). A success after a
 * failure (a duplicate delivery that got through) counts as delivered.
 */
export function nextReceipt(
  current: DeletionNotificationStatus,
  result: DeliveryResult,
): DeletionNotificationStatus | undefined {
  const incoming = receiptOf(result);
  if (current === 'delivered' || current === incoming) return undefined;
  return incoming;
}
