import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { KafkaTransport } from '@app/kafka';

import { DispatchService } from './dispatch.service';

/**
 * The records of `sluice.deliveries.v1` and of the retry tiers, handed to the dispatch. The
 * transports run many at once and commit a record's offset only once all it caused is
 * durable: its retry or dead-letter record acknowledged, and its ledger outcome, which the
 * record waits for without holding its slot (DurableLater).
 */
@Injectable()
export class DeliveriesConsumer {
  constructor(private readonly dispatch: DispatchService) {}

  /**
   * The handler of each of `topics` (logical names) on `transport`: the main topic's on its
   * group's, the retry tiers' on theirs (apps/dispatcher/src/kafka-topology.ts).
   */
  register(transport: KafkaTransport, topics: readonly string[]): void {
    for (const topic of topics) {
      const path = topic === TOPIC.deliveries ? 'main' : 'retry';
      transport.consume(topic, (record) => this.dispatch.handle(record, path));
    }
  }
}
