import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** An audience or computed trait as the API answers it. */
export class AudienceAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  sourceId!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: 'The trait key its identifies carry' })
  key!: string;

  @ApiProperty({ minimum: 0 })
  memberCount!: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastSyncedAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

/** A sync: members uploaded while open, what it changed once committed. */
export class SyncAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  audienceId!: string;

  @ApiProperty({ enum: ['open', 'committed'] })
  status!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiPropertyOptional({ minimum: 0, description: 'Open syncs: distinct members uploaded' })
  uploaded?: number;

  @ApiPropertyOptional({ format: 'date-time' })
  committedAt?: string;

  @ApiPropertyOptional({ minimum: 0 })
  memberCount?: number;

  @ApiPropertyOptional({ minimum: 0 })
  joined?: number;

  @ApiPropertyOptional({ minimum: 0 })
  left?: number;

  @ApiPropertyOptional({ minimum: 0 })
  changed?: number;

  @ApiPropertyOptional({ minimum: 0, description: 'Identifies published: joined + left + changed' })
  identifies?: number;
}
