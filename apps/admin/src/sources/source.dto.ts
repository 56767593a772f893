import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  Matches,
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

/** Query of `GET /admin/v1/sources/:id/usage`: UTC days, inclusive. */
export class UsageQueryDto {
  @ApiPropertyOptional({ example: '2026-11-01', description: 'default: 30 days before `to`' })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a day, YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-30', description: 'default: today (UTC)' })
  @IsOptional()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a day, YYYY-MM-DD' })
  to?: string;
}
