import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { KafkaConnection, KafkaTransport, RebalanceWatch } from '@app/kafka';

import { DedupService } from './dedup.service';
import { RoutingService } from './routing.service';

/**
 * The records of `sluice.calls.v1`, handed to the routing service one by one; the transport
 * runs many at once and commits a call's offset only after its handler returned, that is
 * after the deliveries it caused were acknowledged. A throw (Kafka failing) leaves the offset
 * uncommitted and the record is tried again.
 */
@Injectable()
export class CallsConsumer {
  constructor(
    private readonly routing: RoutingService,
    private readonly dedup: DedupService,
    private readonly connection: KafkaConnection,
  ) {}

  register(transport: KafkaTransport): void {
    if (!this.dedup.enabled) {
      transport.consume(TOPIC.calls, (record) => this.routing.route(record));
      return;
    }
    // The de-duplication keeps state per partition: a rebalance makes it check that state.
    const watch = new RebalanceWatch(transport, this.connection, TOPIC.calls, (assigned) =>
      this.dedup.rebalanced(assigned),
    );
    transport.consume(TOPIC.calls, (record) => {
      watch.arm();
      return this.routing.route(record);
    });
  }
}
