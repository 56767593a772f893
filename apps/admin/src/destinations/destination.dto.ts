import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

import { MAX_WEBHOOKS_PER_DESTINATION } from '@app/contracts';

import { IsWebhookHeaders, IsWebhookUrl } from './webhook-rules';

/** Body of `POST .../destination`. */
export class CreateDestinationDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiPropertyOptional({ enum: ['webhooks'], default: 'webhooks' })
  @IsOptional()
  @IsIn(['webhooks'])
  kind?: 'webhooks';
}

/** Body of `PATCH .../destination`. */
export class UpdateDestinationDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;
}

/** Body of `PUT .../destination/shared-secret`: write-only. */
export class SharedSecretDto {
  @ApiProperty({ minLength: 1, maxLength: 1024, writeOnly: true })
  @IsString()
  @Length(1, 1024)
  sharedSecret!: string;
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
      'Upgrade, Expect, Proxy-*) cannot be set',
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
  @IsOptional()
  @IsWebhookUrl()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @IsWebhookHeaders()
  headers?: Record<string, string>;
}
