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

  /** The main topic's handler on `main`, each retry tier's (logical names) on `retries`. */
  register(main: KafkaTransport, retries: KafkaTransport, tiers: readonly string[]): void {
    main.consume(TOPIC.deliveries, (record) => this.dispatch.handle(record, 'main'));
    for (const topic of tiers) {
      retries.consume(topic, (record) => this.dispatch.handle(record, 'retry'));
    }
  }
}
