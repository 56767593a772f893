import { Injectable } from '@nestjs/common';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord, KafkaTransport } from '@app/kafka';

import { ReceiptsService } from './receipts.service';

/**
 * The records of `sluice.deliveries.outcomes.v1` that concern delete notifications, handed to
 * the receipts service; an offset is committed only once its receipt is stored (a throw
 * leaves it to be tried again). Every other delivery's outcomes pass by unread: they are the
 * ledger's (a record without the call-type header is read, as before that header existed).
 */
@Injectable()
export class OutcomesConsumer {
  constructor(private readonly receipts: ReceiptsService) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.deliveryOutcomes, (record) => this.handle(record));
  }

  async handle(record: IncomingRecord): Promise<void> {
    const type = headerText(record, HEADER.callType);
    if (type !== undefined && type !== 'delete') return;
    await this.receipts.record(record.value);
  }
}
