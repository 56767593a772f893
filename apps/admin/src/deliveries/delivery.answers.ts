import { ApiProperty } from '@nestjs/swagger';

import { BreakerAnswer } from '../destinations/destination.answers';

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

  @ApiProperty({ type: String, nullable: true })
  userId!: string | null;

  @ApiProperty({ type: String, nullable: true })
  anonymousId!: string | null;

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

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The latest replay' })
  lastReplayId!: string | null;
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

/** The last failed request of a window. */
class LastErrorAnswer {
  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  webhookId!: string | null;

  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;

  @ApiProperty({ type: Number, nullable: true })
  status!: number | null;

  @ApiProperty({ type: String, nullable: true })
  detail!: string | null;
}

/** Requests of one window (the last hour or day) and how they fared. */
class HealthFiguresAnswer {
  @ApiProperty({ minimum: 0 })
  attempts!: number;

  @ApiProperty({ type: Number, nullable: true, description: '0 to 1; null without requests' })
  successShare!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  latencyP50Ms!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  latencyP99Ms!: number | null;

  @ApiProperty({ type: LastErrorAnswer, nullable: true })
  lastError!: LastErrorAnswer | null;
}

/** One webhook's health. */
class WebhookHealthAnswer {
  @ApiProperty({ format: 'uuid' })
  webhookId!: string;

  @ApiProperty({ type: String, nullable: true, description: 'null: no longer configured' })
  url!: string | null;

  @ApiProperty({ type: HealthFiguresAnswer })
  hour!: HealthFiguresAnswer;

  @ApiProperty({ type: HealthFiguresAnswer })
  day!: HealthFiguresAnswer;
}

/** A destination's delivery health over the last hour and day, and each webhook's. */
export class DestinationHealthAnswer {
  @ApiProperty({ format: 'uuid' })
  destinationId!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({ type: BreakerAnswer })
  breaker!: BreakerAnswer;

  @ApiProperty({ type: HealthFiguresAnswer })
  hour!: HealthFiguresAnswer;

  @ApiProperty({ type: HealthFiguresAnswer })
  day!: HealthFiguresAnswer;

  @ApiProperty({ type: [WebhookHealthAnswer] })
  webhooks!: WebhookHealthAnswer[];
}
