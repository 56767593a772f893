import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { KafkaTransport } from '@app/kafka';

import { DispatchService } from './dispatch.service';
import { DestinationRateLimits } from './rate-limits.service';

/**
 * The records of `sluice.deliveries.v1` and of the retry tiers, handed to the dispatch. The
 * transports run many at once and commit a record's offset only once all it caused is
 * durable: its retry or dead-letter record acknowledged, and its ledger outcome, which the
 * record waits for without holding its slot (DurableLater).
 */
@Injectable()
export class DeliveriesConsumer {
  constructor(
    private readonly dispatch: DispatchService,
    private readonly rateLimits: DestinationRateLimits,
  ) {}

  /**
   * The handler of each of `topics` (logical names) on `transport`: the main topic's on its
   * group's, the retry tiers' on theirs (apps/dispatcher/src/kafka-topology.ts).
   */
  register(transport: KafkaTransport, topics: readonly string[]): void {
    // The partitions owned decide this replica's share of each destination's rate limit.
    transport.onAssignment((owned) => this.rateLimits.assigned(topics, owned));
    for (const topic of topics) {
      const path = topic === TOPIC.deliveries ? 'main' : 'retry';
      transport.consume(topic, (record) => this.dispatch.handle(record, path));
    }
  }
}
