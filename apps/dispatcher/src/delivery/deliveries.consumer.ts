import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { KafkaTransport } from '@app/kafka';

import { DispatchService } from './dispatch.service';

/**
 * The records of `sluice.deliveries.v1` and of the retry tiers, handed to the dispatch. The
 * transports run many at once and commit a record's offset only after its handler returned:
 * after a 2xx, or after the retry or dead-letter record (and the ledger's outcome) was
 * acknowledged.
 */
@Injectable()
export class DeliveriesConsumer {
  constructor(private readonly dispatch: DispatchService) {}

  /** The main topic's handler on `main`, each retry tier's (logical names) on `retries`. */
  register(main: KafkaTransport, retries: KafkaTransport, tiers: readonly string[]): void {
    main.consume(TOPIC.deliveries, (record) => this.dispatch.dispatch(record, 'main'));
    for (const topic of tiers) {
      retries.consume(topic, (record) => this.dispatch.dispatch(record, 'retry'));
    }
  }
}
