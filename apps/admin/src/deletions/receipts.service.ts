import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { parseDeliveryOutcome } from '@app/contracts';

import { AdminMetrics } from '../admin.metrics';
import { DeletionsRepository, ReceiptDetails } from './deletions.repository';
import { nextReceipt } from './receipt';

/** What an outcome record did. */
export type ReceiptEffect =
  /** A notification's receipt moved (to delivered or failed). */
  | 'recorded'
  /** A duplicate or late outcome: the receipt stays as it is. */
  | 'unchanged'
  /** No notification has its message id (a request removed since, or not ours). */
  | 'unknown'
  /** Not a delete outcome, or not an outcome at all. */
  | 'ignored';

/**
 * Records the dispatcher's outcomes of delete notifications as receipts, idempotently:
 * outcomes come at least once and in any order (see {@link nextReceipt}). A database failure
 * throws, so the record's offset stays uncommitted and it is tried again.
 */
@Injectable()
export class ReceiptsService {
  private readonly logger = new Logger(ReceiptsService.name);

  constructor(
    private readonly requests: DeletionsRepository,
    private readonly metrics: AdminMetrics,
  ) {}

  async record(value: Buffer | null): Promise<ReceiptEffect> {
    const outcome = parseDeliveryOutcome(value);
    if (!outcome) {
      this.logger.warn('an outcome record that is not a delivery outcome was skipped');
      this.metrics.outcomes.inc({ result: 'invalid', effect: 'ignored' });
      return 'ignored';
    }
    const { result } = outcome;
    // Every attempt's outcome comes through here; a receipt waits for a delete's last one.
    const effect =
      outcome.type !== 'delete' || result === 'retrying'
        ? 'ignored'
        : await this.apply(outcome.messageId, result, {
            reason: outcome.reason ?? null,
            attempts: Number.isInteger(outcome.attempts) ? outcome.attempts : null,
            outcomeAt: validDate(outcome.at),
          });
    this.metrics.outcomes.inc({ result: outcome.result, effect });
    if (effect === 'recorded' && outcome.result !== 'delivered') {
      this.logger.warn(
        `delete notification ${outcome.messageId} to destination ${outcome.destinationId} ${outcome.result}: ${outcome.reason ?? 'no reason'} after ${outcome.attempts} attempt(s)`,
      );
    }
    return effect;
  }

  private async apply(
    id: string,
    result: Parameters<typeof nextReceipt>[1],
    details: ReceiptDetails,
  ): Promise<ReceiptEffect> {
    if (!isUUID(id)) return 'unknown';
    return this.requests.updateReceipt(id, (current) => nextReceipt(current, result), details);
  }
}

function validDate(iso: string): Date | null {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms) : null;
}
