import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';

import { BatchProducer, IncomingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';
import { DestinationEntity } from '@app/settings';

import { conflict } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { publishAll } from '../publish';
import { DeliveriesRepository, ReplayTarget } from './deliveries.repository';
import { replayRecord } from './replay-record';

/** A dead letter to replay, with the row of the delivery it is. */
export interface Replay {
  readonly dead: IncomingRecord;
  readonly target: ReplayTarget;
}

/**
 * What single and bulk replays share: the destination check, the produce of the replays
 * (batched, acknowledged by Kafka) and the count on the replayed rows.
 */
@Injectable()
export class Replayer {
  private readonly replays: Counter<'kind'>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly ledger: DeliveriesRepository,
    private readonly producer: BatchProducer,
    @Inject(CLOCK) private readonly clock: Clock,
    metrics: Metrics,
  ) {
    this.replays = metrics.counter(
      'sluice_admin_replays_total',
      'Dead letters replayed to the deliveries topic (acknowledged by Kafka), by kind',
      ['kind'],
    );
  }

  /** 409 `destination_disabled` unless the destination exists and is enabled. */
  async assertDestinationEnabled(destinationId: string): Promise<void> {
    const destination = isUUID(destinationId)
      ? await this.dataSource.getRepository(DestinationEntity).findOneBy({ id: destinationId })
      : null;
    if (!destination?.enabled) {
      throw conflict(
        'destination_disabled',
        'the destination is disabled or deleted: enable it before replaying its deliveries',
      );
    }
  }

  /**
   * Produces the replays to the deliveries topic, each with a new delivery id, and resolves
   * once Kafka acknowledged them all; answers the new ids in order.
   */
  async produce(replays: readonly Replay[], kind: 'single' | 'bulk'): Promise<string[]> {
    const ids = replays.map(() => this.clock.newId());
    await publishAll(
      this.producer,
      replays.map(({ dead, target }, i) => replayRecord(dead, ids[i], target.id)),
    );
    this.replays.inc({ kind }, replays.length);
    return ids;
  }

  /** Adds one to the `replays` of each row and keeps its replay's id (`replayIds`, in order). */
  async count(targets: readonly ReplayTarget[], replayIds: readonly string[]): Promise<void> {
    if (targets.length === 0) return;
    await this.ledger.countReplays(targets, replayIds);
  }
}
