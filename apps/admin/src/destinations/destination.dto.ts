import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

import {
  BATCH_LIMITS,
  MAX_DESTINATION_NAME_CHARS,
  MAX_DESTINATION_RATE_LIMIT_PER_SECOND,
  MAX_SECRET_OVERLAP_SECONDS,
  MAX_WEBHOOKS_PER_DESTINATION,
  ORDERING_LIMITS,
  SIGNATURE_MODES,
  type SignatureMode,
} from '@app/contracts';

import { AbsentOrValid } from '../validation';
import { IsWebhookHeaders, IsWebhookUrl } from './webhook-rules';

/** What the OpenAPI document says of a filter; the service checks it (docs/api.md). */
const FILTER_SCHEMA = {
  type: 'object',
  nullable: true,
  description:
    'Which calls the destination takes; null (or absent) takes every call. Keys: types ' +
    '(call types), events (event names), eventPrefixes, where (a predicate: ' +
    '{field, op, value} with op one of eq, ne, lt, lte, gt, gte, in, exists, prefix, suffix; ' +
    'or {and: [...]}, {or: [...]}, {not: {...}}). See docs/api.md, "Destination filters".',
  example: {
    types: ['track'],
    eventPrefixes: ['Order '],
    where: { field: 'properties.total', op: 'gte', value: 100 },
  },
  additionalProperties: true,
} as const;

/** What the OpenAPI document says of a rate limit. */
const RATE_LIMIT_SCHEMA = {
  type: 'integer',
  nullable: true,
  minimum: 1,
  maximum: MAX_DESTINATION_RATE_LIMIT_PER_SECOND,
  description:
    'Deliveries a second at most, across all dispatcher replicas together; null (or absent) ' +
    'is unlimited. Deliveries over it wait; they never fail for it. See docs/api.md.',
  example: 50,
} as const;

/** What the OpenAPI document says of a signature mode. */
const SIGNATURE_MODE_SCHEMA = {
  enum: [...SIGNATURE_MODES],
  default: 'x-signature',
  description:
    "How requests are signed: x-signature (Segment's X-Signature, hex HMAC-SHA1 of the body) or " +
    'standard-webhooks (webhook-id, webhook-timestamp, webhook-signature; needs a whsec_ ' +
    'secret). See docs/api.md, "Signatures".',
} as const;

/** A rate limit: null (unlimited) or an integer 1 to 10,000. */
function IsRateLimit(): PropertyDecorator {
  return (target, key) => {
    // Null clears the limit; anything else must be a whole number in range.
    ValidateIf((_dto, value) => value !== null && value !== undefined)(target, key);
    IsInt()(target, key);
    Min(1)(target, key);
    Max(MAX_DESTINATION_RATE_LIMIT_PER_SECOND)(target, key);
  };
}

/**
 * A destination's batched delivery (docs/api.md, "Batched delivery"): each bound absent takes
 * its default.
 */
export class BatchingDto {
  @BatchBound('maxCalls', 'Most calls in one request')
  maxCalls?: number;

  @BatchBound('maxBytes', "Most bytes of a request's body; a single larger call goes alone")
  maxBytes?: number;

  @BatchBound('maxWaitMs', 'Longest the first call of a batch waits for it to fill, in ms')
  maxWaitMs?: number;
}

/** An integer bound within `{min, max, default}`, optional and documented so. */
interface Limit {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** One optional bound of an object setting: an integer within `limit`, documented so. */
function Bound(limit: Limit, description: string): PropertyDecorator {
  const { min, max, default: byDefault } = limit;
  return (target, key) => {
    ApiPropertyOptional({ minimum: min, maximum: max, default: byDefault, description })(
      target,
      key,
    );
    IsOptional()(target, key);
    IsInt()(target, key);
    Min(min)(target, key);
    Max(max)(target, key);
  };
}

/** One optional bound of batching: an integer within `BATCH_LIMITS[name]`. */
function BatchBound(name: keyof typeof BATCH_LIMITS, description: string): PropertyDecorator {
  return Bound(BATCH_LIMITS[name], description);
}

/** A setting that is null (off, the default) or an object of bounds of class `type`. */
function IsNullOr(type: new () => object): PropertyDecorator {
  return (target, key) => {
    ValidateIf((_dto, value) => value !== null && value !== undefined)(target, key);
    IsObject()(target, key);
    ValidateNested()(target, key);
    Type(() => type)(target, key);
  };
}

/** What the OpenAPI document says of batching. */
const BATCHING_SCHEMA = {
  type: BatchingDto,
  nullable: true,
  description:
    'Batched delivery: null (or absent) sends one call a request; an object sends the calls ' +
    'as JSON arrays signed as a whole, within its bounds. See docs/api.md, "Batched delivery".',
} as const;

/**
 * A destination's ordered delivery (docs/api.md, "Ordered delivery"): each bound absent takes
 * its default.
 */
export class OrderingDto {
  @OrderingBound(
    'maxPendingCalls',
    "Most calls of one user waiting behind its retrying call before the user's ordering is suspended",
  )
  maxPendingCalls?: number;

  @OrderingBound(
    'maxHoldSeconds',
    "Longest a user's retrying call holds its later calls, in seconds, before the user's ordering is suspended",
  )
  maxHoldSeconds?: number;
}

/** One optional bound of ordering: an integer within `ORDERING_LIMITS[name]`. */
function OrderingBound(name: keyof typeof ORDERING_LIMITS, description: string): PropertyDecorator {
  return Bound(ORDERING_LIMITS[name], description);
}

/** What the OpenAPI document says of ordering. */
const ORDERING_SCHEMA = {
  type: OrderingDto,
  nullable: true,
  description:
    "Ordered delivery per user: null (or absent) delivers without ordering; an object keeps each user's calls in order, " +
    "retrying a failed call in place while the same user's later calls wait, within its bounds. Not with batching " +
    '(400 ordering_with_batching). See docs/api.md, "Ordered delivery".',
} as const;

/** What the OpenAPI document says of sending a `traceparent`. */
const SEND_TRACEPARENT_SCHEMA = {
  type: 'boolean',
  default: false,
  description:
    "Each webhook POST carries the W3C traceparent of the dispatcher's span for it, so the " +
    'receiver can continue the trace; only while the dispatcher exports traces. See docs/api.md.',
} as const;

/** Body of `POST .../destinations` (and of the older `POST .../destination`). */
export class CreateDestinationDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_DESTINATION_NAME_CHARS,
    description:
      "Unique within the source, case-sensitive: the key that names this destination in a call's integrations object",
  })
  @IsString()
  @Length(1, MAX_DESTINATION_NAME_CHARS)
  name!: string;

  @ApiPropertyOptional({ enum: ['webhooks'], default: 'webhooks' })
  @IsOptional()
  @IsIn(['webhooks'])
  kind?: 'webhooks';

  @ApiPropertyOptional(FILTER_SCHEMA)
  @IsOptional()
  @IsObject()
  filter?: Record<string, unknown> | null;

  @ApiPropertyOptional(RATE_LIMIT_SCHEMA)
  @IsRateLimit()
  rateLimitPerSecond?: number | null;

  @ApiPropertyOptional(SIGNATURE_MODE_SCHEMA)
  @IsOptional()
  @IsIn(SIGNATURE_MODES)
  signatureMode?: SignatureMode;
  @ApiPropertyOptional(BATCHING_SCHEMA)
  @IsNullOr(BatchingDto)
  batching?: BatchingDto | null;
  @ApiPropertyOptional(ORDERING_SCHEMA)
  @IsNullOr(OrderingDto)
  ordering?: OrderingDto | null;
  @ApiPropertyOptional(SEND_TRACEPARENT_SCHEMA)
  @AbsentOrValid()
  @IsBoolean()
  sendTraceparent?: boolean;
}

/** Body of `PATCH` on a destination: the fields to change. */
export class UpdateDestinationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_DESTINATION_NAME_CHARS })
  @AbsentOrValid()
  @IsString()
  @Length(1, MAX_DESTINATION_NAME_CHARS)
  name?: string;

  @ApiPropertyOptional(FILTER_SCHEMA)
  @IsOptional()
  @IsObject()
  filter?: Record<string, unknown> | null;

  @ApiPropertyOptional(RATE_LIMIT_SCHEMA)
  @IsRateLimit()
  rateLimitPerSecond?: number | null;

  @ApiPropertyOptional(SIGNATURE_MODE_SCHEMA)
  @AbsentOrValid()
  @IsIn(SIGNATURE_MODES)
  signatureMode?: SignatureMode;
  @ApiPropertyOptional(BATCHING_SCHEMA)
  @IsNullOr(BatchingDto)
  batching?: BatchingDto | null;
  @ApiPropertyOptional(ORDERING_SCHEMA)
  @IsNullOr(OrderingDto)
  ordering?: OrderingDto | null;
  @ApiPropertyOptional(SEND_TRACEPARENT_SCHEMA)
  @AbsentOrValid()
  @IsBoolean()
  sendTraceparent?: boolean;
}

/** Body of `PUT .../destination/shared-secret`: write-only. */
export class SharedSecretDto {
  @ApiProperty({ minLength: 1, maxLength: 1024, writeOnly: true })
  @IsString()
  @Length(1, 1024)
  sharedSecret!: string;
}

/** Body of `POST .../destinations/:destId/shared-secret/rotate`: the new secret (write-only) and the overlap. */
export class RotateSecretDto extends SharedSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_SECRET_OVERLAP_SECONDS,
    description:
      'How long the previous secret keeps signing beside the new one, in seconds; absent: ' +
      'SECRET_ROTATION_OVERLAP_SECONDS (24 h unless configured); 0: none',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_SECRET_OVERLAP_SECONDS)
  overlapSeconds?: number;
}

/** One webhook entry: an absolute http(s) URL and static headers. */
export class WebhookDto {
  @ApiProperty({
    example: 'https://example.com/hooks/sluice',
    maxLength: 2048,
    description: 'http or https; no user or password in it; host names may hold `_`',
  })
  @IsWebhookUrl()
  @MaxLength(2048)
  url!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'At most 5; Content-Type, User-Agent, X-Signature, Host, Content-Length and ' +
      'connection-level headers (Connection, Keep-Alive, Transfer-Encoding, TE, Trailer, ' +
      'Upgrade, Expect, Proxy-*) cannot be set. Values are stored encrypted and answers ' +
      'mask them as "********"; sending "********" back keeps the stored value of that name',
  })
  @IsOptional()
  @IsWebhookHeaders()
  headers?: Record<string, string>;
}

/** A webhook entry in a list replacement: an entry with an id keeps it. */
export class WebhookEntryDto extends WebhookDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  id?: string;
}

/** Body of `PUT .../destination/webhooks`: the whole list, in order. */
export class ReplaceWebhooksDto {
  @ApiProperty({ type: [WebhookEntryDto], maxItems: MAX_WEBHOOKS_PER_DESTINATION })
  @IsArray()
  @ArrayMaxSize(MAX_WEBHOOKS_PER_DESTINATION)
  @ValidateNested({ each: true })
  @Type(() => WebhookEntryDto)
  webhooks!: WebhookEntryDto[];
}

/** Body of `PATCH .../webhooks/:webhookId`: the fields to change. */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: 2048 })
  @AbsentOrValid()
  @IsWebhookUrl()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @AbsentOrValid()
  @IsWebhookHeaders()
  headers?: Record<string, string>;
}
