import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';

import { CALL_TYPES, DELIVERY_REASONS, type DeliveryState } from '@app/contracts';

/** The outcomes a delivery can be in. */
export const OUTCOMES: readonly DeliveryState[] = ['delivered', 'retrying', 'dead', 'discarded'];

/** The call types a delivery can be of. */
export const LEDGER_CALL_TYPES: readonly string[] = [...CALL_TYPES, 'delete'];

/** Why an unknown reason is refused: the codes are a closed list. */
const REASON_MESSAGE = `reason must be one of ${DELIVERY_REASONS.join(', ')}`;

/** Most deliveries in one page, and the default. */
export const MAX_PAGE_ITEMS = 200;
export const DEFAULT_PAGE_ITEMS = 50;

/**
 * An ISO 8601 day, or a time with its zone (`Z` or an offset): a time without a zone would
 * depend on the server's.
 */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;
const ISO_TIME_MESSAGE = 'must be an ISO 8601 time with a zone (2026-11-25T10:00:00Z) or a day';

function IsIsoTime(): PropertyDecorator {
  return (target, key) => {
    IsISO8601({ strict: true }, { message: `${String(key)} ${ISO_TIME_MESSAGE}` })(target, key);
    Matches(ISO_TIME, { message: `${String(key)} ${ISO_TIME_MESSAGE}` })(target, key);
  };
}

/** Query of `GET /admin/v1/deliveries`. */
export class DeliveriesQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  sourceId?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  destinationId?: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  messageId?: string;

  @ApiPropertyOptional({ maxLength: 200, description: "The call's userId or anonymousId" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  user?: string;

  @ApiPropertyOptional({ maxLength: 200, description: "The call's userId" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  userId?: string;

  @ApiPropertyOptional({ maxLength: 200, description: "The call's anonymousId" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  anonymousId?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    example: 'Order Completed',
    description: "A track's event, or a page's or screen's name",
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  event?: string;

  @ApiPropertyOptional({ enum: LEDGER_CALL_TYPES, description: 'The call type' })
  @IsOptional()
  @IsIn(LEDGER_CALL_TYPES)
  type?: string;

  @ApiPropertyOptional({ minimum: 100, maximum: 599, description: 'The last HTTP status' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(599)
  status?: number;

  @ApiPropertyOptional({
    maxLength: 2048,
    description: 'Deliveries of the destinations that have a webhook with this URL now',
  })
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  webhookUrl?: string;

  @ApiPropertyOptional({ enum: OUTCOMES })
  @IsOptional()
  @IsIn(OUTCOMES)
  outcome?: DeliveryState;

  @ApiPropertyOptional({ enum: DELIVERY_REASONS, example: 'http_4xx' })
  @IsOptional()
  @IsIn(DELIVERY_REASONS, { message: REASON_MESSAGE })
  reason?: string;

  @ApiPropertyOptional({
    example: '2026-11-25T00:00:00Z',
    description: 'First attempts at or after this time',
  })
  @IsOptional()
  @IsIsoTime()
  from?: string;

  @ApiPropertyOptional({
    example: '2026-11-26T00:00:00Z',
    description: 'First attempts before this time (exclusive)',
  })
  @IsOptional()
  @IsIsoTime()
  to?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_ITEMS, default: DEFAULT_PAGE_ITEMS })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_ITEMS)
  limit?: number;

  @ApiPropertyOptional({ description: "A previous answer's `nextCursor`", maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  cursor?: string;
}

/** Path of `/admin/v1/deliveries/:id`. */
export class DeliveryIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  id!: string;
}

/** Path of `/admin/v1/destinations/:destinationId/health`. */
export class DestinationIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  destinationId!: string;
}

/** Query of `GET /admin/v1/deliveries/stats`. */
export class DeliveryStatsQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 60, default: 5 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  minutes?: number;
}

/** Body of `POST /admin/v1/sources/:sourceId/destination/replay`. */
export class ReplayRangeDto {
  @ApiProperty({ example: '2026-11-25T00:00:00Z', description: 'First attempts at or after' })
  @IsIsoTime()
  from!: string;

  @ApiProperty({ example: '2026-11-26T00:00:00Z', description: 'First attempts before' })
  @IsIsoTime()
  to!: string;

  @ApiPropertyOptional({
    enum: DELIVERY_REASONS,
    description: 'Only dead letters with this reason',
  })
  @IsOptional()
  @IsIn(DELIVERY_REASONS, { message: REASON_MESSAGE })
  reason?: string;

  @ApiPropertyOptional({
    default: false,
    description: 'Only dead letters never replayed before (`replays` 0)',
  })
  @IsOptional()
  @IsBoolean()
  notReplayed?: boolean;
}

/** Query of `GET /admin/v1/replays`. */
export class ReplaysQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  destinationId?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

/** Path of `/admin/v1/replays/:id`. */
export class ReplayIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  id!: string;
}
