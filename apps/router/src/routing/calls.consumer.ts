import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { KafkaTransport } from '@app/kafka';

import { RoutingService } from './routing.service';

/**
 * The records of `sluice.calls.v1`, handed to the routing service one by one; the transport
 * runs many at once and commits a call's offset only after its handler returned, that is
 * after the deliveries it caused were acknowledged. A throw (Kafka failing) leaves the offset
 * uncommitted and the record is tried again.
 */
@Injectable()
export class CallsConsumer {
  constructor(private readonly routing: RoutingService) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.calls, (record) => this.routing.route(record));
  }
}
