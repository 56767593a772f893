import { BadRequestException } from '@nestjs/common';

import { ORDERING_LIMITS } from '@app/contracts';
import type { DestinationEntity } from '@app/settings';

import type { OrderingDto } from './destination.dto';

/** The ordering columns of a destination. */
export type OrderingColumns = Pick<
  DestinationEntity,
  'orderingMaxPendingCalls' | 'orderingMaxHoldSeconds'
>;

/** The ordering columns of a request's `ordering`: both null, or each bound or its default. */
export function orderingColumns(ordering: OrderingDto | null | undefined): OrderingColumns {
  if (ordering === null || ordering === undefined) {
    return { orderingMaxPendingCalls: null, orderingMaxHoldSeconds: null };
  }
  return {
    orderingMaxPendingCalls: ordering.maxPendingCalls ?? ORDERING_LIMITS.maxPendingCalls.default,
    orderingMaxHoldSeconds: ordering.maxHoldSeconds ?? ORDERING_LIMITS.maxHoldSeconds.default,
  };
}

/**
 * Ordering does not combine with batching: a batch is retried as a whole through the retry
 * tiers, so holding a user's later calls behind one call of a batch would hold every user of
 * that batch (docs/api.md, "Ordered delivery"). Checked on the destination as it would be
 * stored.
 */
export function orderingRefusal(
  d: Pick<DestinationEntity, 'batchMaxCalls' | 'orderingMaxPendingCalls'>,
): BadRequestException | undefined {
  if (d.orderingMaxPendingCalls === null || d.orderingMaxPendingCalls === undefined) return;
  if (d.batchMaxCalls === null || d.batchMaxCalls === undefined) return;
  return new BadRequestException({
    code: 'ordering_with_batching',
    message: 'ordering: ordered delivery does not combine with batching; set one of them to null',
  });
}
