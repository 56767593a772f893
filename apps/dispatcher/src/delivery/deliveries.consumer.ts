import { Injectable } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { IncomingRecord, KafkaTransport } from '@app/kafka';

import { DispatchService } from './dispatch.service';

/**
 * The records of `sluice.deliveries.v1` and of the retry tiers, handed to the dispatch. The
 * transports run many at once and commit a record's offset only after its handler returned:
 * after a 2xx, or after the retry or dead-letter record was acknowledged.
 *
 * The handlers are registered on the transports directly rather than as `@EventPattern`
 * methods: Nest's RPC proxy wraps each call in pipes, interceptors and an exception filter,
 * half a dozen promises per record that cost about 5% of a delivery's CPU, and nothing here
 * uses them (a handler that throws leaves its offset uncommitted either way).
 */
@Injectable()
export class DeliveriesConsumer {
  constructor(private readonly dispatch: DispatchService) {}

  /** The main topic's handler on `main`, each retry tier's (logical names) on `retries`. */
  register(main: KafkaTransport, retries: KafkaTransport, tiers: readonly string[]): void {
    main.addHandler(
      TOPIC.deliveries,
      (record: IncomingRecord) => this.dispatch.dispatch(record, 'main'),
      true,
    );
    for (const topic of tiers) {
      retries.addHandler(
        topic,
        (record: IncomingRecord) => this.dispatch.dispatch(record, 'retry'),
        true,
      );
    }
  }
}
