import { ApiProperty } from '@nestjs/swagger';

/** The ledger's outcomes (`DeliveryState`). */
const OUTCOMES = ['delivered', 'retrying', 'dead', 'discarded'];

class DeadLetterAnswer {
  @ApiProperty({ minimum: 0 })
  partition!: number;

  @ApiProperty({ description: 'Offset as decimal text' })
  offset!: string;
}

/** A delivery as the API answers it. */
export class DeliveryAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  sourceId!: string;

  @ApiProperty({ format: 'uuid' })
  destinationId!: string;

  @ApiProperty({ type: String, nullable: true, description: 'null when deleted since' })
  destinationName!: string | null;

  @ApiProperty()
  messageId!: string;

  @ApiProperty({ example: 'track' })
  type!: string;

  @ApiProperty({ type: String, nullable: true })
  event!: string | null;

  @ApiProperty({ enum: OUTCOMES })
  outcome!: string;

  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;

  @ApiProperty({ type: Number, nullable: true })
  lastStatus!: number | null;

  @ApiProperty({ type: String, nullable: true })
  lastDetail!: string | null;

  @ApiProperty({ type: Number, nullable: true })
  lastLatencyMs!: number | null;

  @ApiProperty({ minimum: 0 })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  firstAttemptAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  nextAttemptAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  @ApiProperty({ type: DeadLetterAnswer, nullable: true })
  deadLetter!: DeadLetterAnswer | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  replayOf!: string | null;

  @ApiProperty({ minimum: 0 })
  replays!: number;
}

/** A delivery with its attempts, oldest first. */
export class DeliveryDetailAnswer extends DeliveryAnswer {
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  history!: object[];
}

/** A page of deliveries. */
export class DeliveriesPageAnswer {
  @ApiProperty({ type: [DeliveryAnswer] })
  items!: DeliveryAnswer[];

  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  nextCursor!: string | null;
}

class OutcomeCountsAnswer {
  @ApiProperty({ minimum: 0 })
  delivered!: number;

  @ApiProperty({ minimum: 0 })
  retrying!: number;

  @ApiProperty({ minimum: 0 })
  dead!: number;

  @ApiProperty({ minimum: 0 })
  discarded!: number;
}

/** Deliveries by outcome whose latest outcome came since `since`. */
export class DeliveryStatsAnswer {
  @ApiProperty({ format: 'date-time' })
  since!: string;

  @ApiProperty({ type: OutcomeCountsAnswer })
  counts!: OutcomeCountsAnswer;
}

/** A replay made: the new delivery and the one it replays. */
export class ReplayMadeAnswer {
  @ApiProperty({ format: 'uuid' })
  deliveryId!: string;

  @ApiProperty({ format: 'uuid' })
  replayOf!: string;
}

/** A bulk replay and its progress. */
export class ReplayJobAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  destinationId!: string;

  @ApiProperty({ enum: ['running', 'finished', 'failed'] })
  status!: string;

  @ApiProperty({ minimum: 0 })
  total!: number;

  @ApiProperty({ minimum: 0 })
  replayed!: number;

  @ApiProperty({ minimum: 0 })
  failed!: number;

  @ApiProperty({ type: String, nullable: true })
  error!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finishedAt!: string | null;
}
