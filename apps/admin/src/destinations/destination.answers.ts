import { ApiProperty } from '@nestjs/swagger';

/** A webhook entry as the API answers it. */
export class WebhookAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ minimum: 0 })
  position!: number;

  @ApiProperty({ description: 'Without credentials' })
  url!: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  headers!: Record<string, string>;
}

/** A batching destination's bounds. */
class BatchingAnswer {
  @ApiProperty({ minimum: 1, maximum: 4_000 })
  maxCalls!: number;

  @ApiProperty({ minimum: 1 })
  maxBytes!: number;

  @ApiProperty({ minimum: 0 })
  maxWaitMs!: number;
}

/** An ordered destination's bounds. */
class OrderingAnswer {
  @ApiProperty({ minimum: 1, maximum: 1_000 })
  maxPendingCalls!: number;

  @ApiProperty({ minimum: 1, maximum: 3_600 })
  maxHoldSeconds!: number;
}

/** A destination as the API answers it: whether a shared secret is set, never the secret. */
export class DestinationAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  sourceId!: string;

  @ApiProperty({ example: 'webhooks' })
  kind!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Which calls it takes; null takes every call',
  })
  filter!: object | null;

  @ApiProperty({ type: Number, nullable: true, description: 'null: unlimited' })
  rateLimitPerSecond!: number | null;

  @ApiProperty({ type: BatchingAnswer, nullable: true, description: 'null: one call a request' })
  batching!: BatchingAnswer | null;

  @ApiProperty({ type: OrderingAnswer, nullable: true, description: 'null: no ordering' })
  ordering!: OrderingAnswer | null;

  @ApiProperty()
  sharedSecretSet!: boolean;

  @ApiProperty({ enum: ['x-signature', 'standard-webhooks'] })
  signatureMode!: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the previous secret of the last rotation stops (or stopped) signing',
  })
  previousSecretExpiresAt!: string | null;

  @ApiProperty({ type: [WebhookAnswer] })
  webhooks!: WebhookAnswer[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

/** A destination's circuit breaker over every dispatcher replica. */
export class BreakerAnswer {
  @ApiProperty({ enum: ['closed', 'half_open', 'open'] })
  state!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  since!: string | null;

  @ApiProperty({ minimum: 0 })
  openReplicas!: number;
}

/** A destination with its circuit breaker over every dispatcher replica. */
export class DestinationWithBreakerAnswer extends DestinationAnswer {
  @ApiProperty({ type: BreakerAnswer })
  breaker!: BreakerAnswer;
}
