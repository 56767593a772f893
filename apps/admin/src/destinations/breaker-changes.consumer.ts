import { Injectable, Logger } from '@nestjs/common';

import { parseBreakerChange, TOPIC } from '@app/contracts';
import { IncomingRecord, KafkaTransport } from '@app/kafka';

import { BreakerStates } from './breaker-states';

/**
 * The dispatchers' breaker changes (`sluice.breaker.changes.v1`), kept in memory by
 * {@link BreakerStates}. Every admin replica reads them all, in a consumer group of its own
 * (see `kafka-topology.ts`), from the start of the topic's retention.
 */
@Injectable()
export class BreakerChangesConsumer {
  private readonly logger = new Logger(BreakerChangesConsumer.name);

  constructor(private readonly states: BreakerStates) {}

  register(transport: KafkaTransport): void {
    transport.consume(TOPIC.breakerChanges, (record) => this.handle(record));
  }

  handle(record: IncomingRecord): Promise<void> {
    const change = parseBreakerChange(record.value);
    if (change === undefined) {
      this.logger.warn(`breaker record ${record.partition}@${record.offset} unreadable, skipped`);
    } else {
      this.states.record(change);
    }
    return Promise.resolve();
  }
}
