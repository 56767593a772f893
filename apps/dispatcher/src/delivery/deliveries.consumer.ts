import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';

import { TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { DispatchService } from './dispatch.service';

/**
 * The records of `sluice.deliveries.v1`. The transport runs many at once and commits a
 * record's offset only after its handler returned: after a 2xx, or after the retry or
 * dead-letter record was acknowledged. The retry tiers' handlers are registered by `main.ts`
 * on a transport of their own, because their topics come from configuration.
 */
@Controller()
export class DeliveriesConsumer {
  constructor(private readonly dispatch: DispatchService) {}

  @EventPattern(TOPIC.deliveries)
  async handle(@Payload() record: IncomingRecord): Promise<void> {
    await this.dispatch.dispatch(record, 'main');
  }
}
