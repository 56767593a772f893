import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';

import { TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { ReceiptsService } from './receipts.service';

/**
 * The records of `sluice.deliveries.outcomes.v1`, handed to the receipts service; an
 * offset is committed only once its receipt is stored (a throw leaves it to be tried again).
 */
@Controller()
export class OutcomesConsumer {
  constructor(private readonly receipts: ReceiptsService) {}

  @EventPattern(TOPIC.deliveryOutcomes)
  async handle(@Payload() record: IncomingRecord): Promise<void> {
    await this.receipts.record(record.value);
  }
}
