import { ApiProperty } from '@nestjs/swagger';

class ReceiptCountsAnswer {
  @ApiProperty({ minimum: 0 })
  notifications!: number;

  @ApiProperty({ minimum: 0 })
  delivered!: number;

  @ApiProperty({ minimum: 0 })
  pending!: number;

  @ApiProperty({ minimum: 0 })
  failed!: number;
}

class DeletionTargetAnswer extends ReceiptCountsAnswer {
  @ApiProperty({ format: 'uuid' })
  sourceId!: string;

  @ApiProperty({ format: 'uuid' })
  destinationId!: string;
}

/** A deletion request with its receipts. */
export class DeletionRequestAnswer {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  publishedAt!: string | null;

  @ApiProperty({ minimum: 0 })
  userCount!: number;

  @ApiProperty({ type: [String], nullable: true, description: 'null: all sources' })
  sourceIds!: string[] | null;

  @ApiProperty({ type: ReceiptCountsAnswer })
  totals!: ReceiptCountsAnswer;

  @ApiProperty({ type: [DeletionTargetAnswer] })
  targets!: DeletionTargetAnswer[];
}
