import { Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';

import { TOPIC } from '@app/contracts';
import { IncomingRecord, RecordReader } from '@app/kafka';

import { conflict, kafkaUnavailable } from '../admin.errors';
import { DeliveriesService } from './deliveries.service';
import { LedgerRecord } from './delivery.view';
import { deadLetterDeliveryId } from './replay-record';
import { Replayer } from './replayer';

/** The answer to a replay: the new delivery's id and the one it repeats. */
export interface ReplayAnswer {
  readonly deliveryId: string;
  readonly replayOf: string;
}

/**
 * Replays one dead delivery: reads its dead letter back from the dead-letter topic (the
 * ledger row says where) and produces the same bytes to the deliveries topic as a new
 * delivery with a fresh retry window. A delivery may be replayed any number of times.
 */
@Injectable()
export class ReplayService {
  private readonly logger = new Logger(ReplayService.name);

  constructor(
    private readonly deliveries: DeliveriesService,
    private readonly reader: RecordReader,
    private readonly replayer: Replayer,
  ) {}

  async replay(id: string): Promise<ReplayAnswer> {
    const row = await this.deliveries.find(id);
    if (row.state !== 'dead' || row.dead_partition === null || row.dead_offset === null) {
      throw conflict(
        'not_replayable',
        row.state === 'dead'
          ? 'the dead letter of this delivery is not recorded yet: try again shortly'
          : `only dead deliveries can be replayed; this one is ${row.state}`,
      );
    }
    await this.replayer.assertDestinationEnabled(row.destination_id);
    const dead = await this.readDeadLetter(row);
    const target = { id: row.id, firstAttemptAt: row.first_attempt_at };
    let deliveryId: string;
    try {
      [deliveryId] = await this.replayer.produce([{ dead, target }], 'single');
    } catch (error) {
      this.logger.warn(`replay of delivery ${row.id} not acknowledged: ${String(error)}`);
      throw kafkaUnavailable('the replay');
    }
    await this.replayer.count([target], [deliveryId]);
    this.logger.log(`delivery ${row.id} replayed as ${deliveryId}`);
    return { deliveryId, replayOf: row.id };
  }

  /** The row's dead letter; 409 when it is gone or is another delivery's, 503 when unreadable. */
  private async readDeadLetter(row: LedgerRecord): Promise<IncomingRecord> {
    const position = { partition: row.dead_partition!, offset: String(row.dead_offset) };
    const found: IncomingRecord[] = [];
    try {
      await this.reader.read(TOPIC.deliveriesDead, [position], (records) => {
        found.push(...records);
        return Promise.resolve();
      });
    } catch (error) {
      this.logger.warn(`dead letter of delivery ${row.id} not read: ${String(error)}`);
      throw new ServiceUnavailableException({
        code: 'kafka_unavailable',
        message: 'the dead letter could not be read from Kafka; nothing was replayed, retry later',
      });
    }
    const dead = found[0];
    if (dead === undefined) {
      throw conflict(
        'not_replayable',
        'the dead letter is no longer on the dead-letter topic (removed by its retention)',
      );
    }
    const deadId = deadLetterDeliveryId(dead);
    if (deadId !== undefined && deadId !== row.id) {
      throw conflict(
        'not_replayable',
        "the dead letter the ledger points at is another delivery's",
      );
    }
    return dead;
  }
}
