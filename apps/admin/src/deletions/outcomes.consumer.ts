import { Injectable } from '@nestjs/common';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord, KafkaTransport } from '@app/kafka';

import { ReceiptsService } from './receipts.service';

/**
 * The records of `sluice.deliveries.outcomes.v1` that concern delete notifications, handed to
 * the receipts service; an offset is committed only once its receipt is stored (a throw
 * leaves it to be tried again). Every other delivery's outcomes (records of several, or of
 * another call type) pass by unread: they are the ledger's. A record without either header
 * is read, as before those headers existed.
 */
@Injectable()
export class OutcomesConsumer {
  constructor(private readonly receipts: ReceiptsService) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.deliveryOutcomes, (record) => this.handle(record));
  }

  async handle(record: IncomingRecord): Promise<void> {
    // Records of several outcomes never hold a delete's: those are records of their own.
    if (headerText(record, HEADER.outcomeCount) !== undefined) return;
    const type = headerText(record, HEADER.callType);
    if (type !== undefined && type !== 'delete') return;
    await this.receipts.record(record.value);
  }
}
