import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';

import { TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { RoutingService } from './routing.service';

/**
 * The records of `sluice.calls.v1`, handed to the routing service one by one; the transport
 * runs many at once and commits a call's offset only after its handler returned, that is
 * after the deliveries it caused were acknowledged. A throw (Kafka failing) leaves the offset
 * uncommitted and the record is tried again.
 */
@Controller()
export class CallsConsumer {
  constructor(private readonly routing: RoutingService) {}

  @EventPattern(TOPIC.calls)
  async handle(@Payload() record: IncomingRecord): Promise<void> {
    await this.routing.route(record);
  }
}
