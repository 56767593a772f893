import { DELIVERY_REASONS, DeliveryReason } from '@app/contracts';

import type { DiscardReason, LeaveReason } from './delivery-decision';
import type { SuspendReason } from './ordering-decision';
import type { PermanentReason, RetryableReason } from './attempt-result';

/** The reasons the dispatcher's types name; each must be in the admin API's list. */
type Named =
  | RetryableReason
  | PermanentReason
  | DiscardReason
  | LeaveReason
  | `ordering_suspended_${SuspendReason}`;
/** `true` only when no named reason is missing from DELIVERY_REASONS (checked by the compiler). */
const ALL_LISTED: [Exclude<Named, DeliveryReason>] extends [never] ? true : false = true;

describe('DELIVERY_REASONS', () => {
  it("lists every reason the dispatcher's types name", () => {
    expect(ALL_LISTED).toBe(true);
  });

  it.each([
    'permanent_failure',
    'retry_window_closed',
    'secret_unreadable',
    'webhooks_removed',
    'breaker_open',
  ])('lists %s, a reason given as text', (reason) => {
    expect(DELIVERY_REASONS).toContain(reason);
  });
});
