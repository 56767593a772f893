import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length, Matches } from 'class-validator';

/** Body of `POST /admin/v1/sources`. */
export class CreateSourceDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name!: string;
}

/** Body of `PATCH /admin/v1/sources/:id`. */
export class UpdateSourceDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
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
