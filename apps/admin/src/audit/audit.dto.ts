import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

/** Largest page of `GET /admin/v1/audit`. */
export const MAX_AUDIT_PAGE = 500;

/** Query of `GET /admin/v1/audit`. */
export class AuditQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_AUDIT_PAGE)
  limit?: number;

  @ApiPropertyOptional({
    description: "The previous page's `nextCursor`: entries older than it",
    pattern: '^[1-9][0-9]{0,17}$',
  })
  @IsOptional()
  @Matches(/^[1-9][0-9]{0,17}$/, { message: 'cursor must be a nextCursor this API gave' })
  cursor?: string;
}

/** One change in the audit log. */
export class AuditEntryDto {
  @ApiProperty({ description: 'Increasing with each change', example: '42' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ description: 'The name of the token that made the change (never the token)' })
  tokenName!: string;

  @ApiProperty({ example: 'PATCH' })
  method!: string;

  @ApiProperty({ example: '/admin/v1/sources/:sourceId' })
  route!: string;

  @ApiProperty({ example: '/admin/v1/sources/9b0e5a1e-4c1b-4d0f-9a57-0f3c1f2d8e11' })
  path!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The id of the thing made or changed, when there is one',
  })
  resourceId!: string | null;
}

/** A page of the audit log, newest first. */
export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto] })
  items!: AuditEntryDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass back as `cursor` for the next (older) page; null on the last page',
  })
  nextCursor!: string | null;
}
