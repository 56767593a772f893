import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  ValidateBy,
} from 'class-validator';

import { MAX_ALLOWED_ORIGINS_PER_SOURCE } from '@app/contracts';

import { AbsentOrValid } from '../validation';
import { IsSerializedOrigin } from './origin-rules';

/** How the API describes `allowedOrigins`. */
const ALLOWED_ORIGINS_DOC: ApiPropertyOptions = {
  type: [String],
  maxItems: MAX_ALLOWED_ORIGINS_PER_SOURCE,
  example: ['https://shop.example.com'],
  description:
    'Browser origins whose pages may use the write key (CORS), as browsers send them in ' +
    '`Origin`; empty (the default) allows every origin. Calls without an Origin (servers, ' +
    'mobile apps) are not affected.',
};

/** The rules of an origin allow-list, shared by both bodies. */
function AllowedOrigins(): PropertyDecorator {
  return (target, key) => {
    for (const rule of [
      IsArray(),
      ArrayMaxSize(MAX_ALLOWED_ORIGINS_PER_SOURCE),
      ArrayUnique(),
      IsSerializedOrigin({ each: true }),
    ]) {
      rule(target, key);
    }
  };
}

/** Body of `POST /admin/v1/sources`. */
export class CreateSourceDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiPropertyOptional(ALLOWED_ORIGINS_DOC)
  @IsOptional()
  @AllowedOrigins()
  allowedOrigins?: string[];
}

/** Body of `PATCH /admin/v1/sources/:id`. */
export class UpdateSourceDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @AbsentOrValid()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional()
  @AbsentOrValid()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional(ALLOWED_ORIGINS_DOC)
  @AbsentOrValid()
  @AllowedOrigins()
  allowedOrigins?: string[];
}

/** A day of the calendar as YYYY-MM-DD, from 1970 (usage is never older) to 9999. */
const DAY_PATTERN = /^(19[7-9]\d|[2-9]\d{3})-\d{2}-\d{2}$/;

/** A day that exists (not 2026-02-30), as {@link DAY_PATTERN} writes it. */
export function isDay(value: unknown): boolean {
  if (typeof value !== 'string' || !DAY_PATTERN.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(time) && new Date(time).toISOString().startsWith(value);
}

function IsDay(): PropertyDecorator {
  return ValidateBy({
    name: 'isDay',
    validator: {
      validate: isDay,
      defaultMessage: (args) => `${args?.property} must be a day from 1970 on, YYYY-MM-DD`,
    },
  });
}

/** Query of `GET /admin/v1/sources/:id/usage`: UTC days, inclusive. */
export class UsageQueryDto {
  @ApiPropertyOptional({
    example: '2026-11-01',
    format: 'date',
    pattern: DAY_PATTERN.source,
    description: 'default: 30 days before `to`',
  })
  @IsOptional()
  @IsDay()
  from?: string;

  @ApiPropertyOptional({
    example: '2026-11-30',
    format: 'date',
    pattern: DAY_PATTERN.source,
    description: 'default: today (UTC)',
  })
  @IsOptional()
  @IsDay()
  to?: string;
}
