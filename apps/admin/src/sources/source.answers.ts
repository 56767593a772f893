import { ApiProperty } from '@nestjs/swagger';

/** A source as the API answers it (the OpenAPI schema of `SourceView`). */
export class SourceAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({ type: [String], description: 'Empty: every origin' })
  allowedOrigins!: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

/** A source with its write key: answered only when the key is made. */
export class SourceWithWriteKeyAnswer extends SourceAnswer {
  @ApiProperty({ description: 'Shown this once' })
  writeKey!: string;
}

class UsageDayAnswer {
  @ApiProperty({ example: '2026-11-01' })
  day!: string;

  @ApiProperty({ minimum: 0 })
  calls!: number;
}

/** Calls accepted per UTC day. */
export class UsageAnswer {
  @ApiProperty({ format: 'uuid' })
  sourceId!: string;

  @ApiProperty({ type: [UsageDayAnswer] })
  days!: UsageDayAnswer[];
}
