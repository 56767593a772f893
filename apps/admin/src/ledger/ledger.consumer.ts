import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

import { parseDeliveryOutcomes, TOPIC } from '@app/contracts';
import { IncomingRecord, KafkaTransport } from '@app/kafka';

import { deadPointer, ledgerRow } from './ledger-rows';
import { LedgerWriter } from './ledger.writer';

/** How often partitions past the retention are looked for. */
const RETENTION_CHECK_MS = 10 * 60_000;

/**
 * The ledger writer's consumer group: every attempt's outcome and every dead letter (for its
 * position) become ledger rows. A record's offset is committed once its row is; a record that
 * is not an outcome is skipped with a warning, never retried for ever.
 */
@Injectable()
export class LedgerConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LedgerConsumer.name);
  private timer?: NodeJS.Timeout;

  constructor(private readonly writer: LedgerWriter) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.deliveryOutcomes, (record) => this.outcome(record));
    transport.consume(TOPIC.deliveriesDead, (record) => this.deadLetter(record));
  }

  onApplicationBootstrap(): void {
    void this.dropExpired();
    this.timer = setInterval(() => void this.dropExpired(), RETENTION_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** A record of one outcome (a delete's) or of several. */
  async outcome(record: IncomingRecord): Promise<void> {
    const parsed = parseDeliveryOutcomes(record.value);
    const rows = parsed?.outcomes.map(ledgerRow).filter((row) => row !== undefined) ?? [];
    const skipped =
      parsed === undefined ? 1 : parsed.outcomes.length + parsed.invalid - rows.length;
    if (skipped > 0) {
      this.logger.warn(
        `outcome record ${record.partition}@${record.offset}: ${skipped} of its entries are not outcomes; skipped`,
      );
    }
    if (rows.length === 1) await this.writer.add(rows[0]);
    else if (rows.length > 1) await Promise.all(rows.map((row) => this.writer.add(row)));
  }

  async deadLetter(record: IncomingRecord): Promise<void> {
    const pointer = deadPointer(record);
    // A dead letter without a destination or message id has no ledger row to point from.
    if (pointer) await this.writer.addPointer(pointer);
  }

  private async dropExpired(): Promise<void> {
    try {
      await this.writer.dropExpired();
    } catch (error) {
      this.logger.warn(`dropping expired ledger partitions failed: ${String(error)}`);
    }
  }
}
