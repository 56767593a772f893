import {
  Check,
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';

import { SourceEntity } from './source.entity';

/**
 * Calls accepted for one source on one UTC day, as counted by ingest before routing. Rows
 * are added to in batches (see `addUsage`); the admin API reads them.
 */
@Entity({ name: 'source_usage' })
@Check('source_usage_calls_check', `"calls" >= 0`)
export class SourceUsageEntity {
  @PrimaryColumn('uuid', { name: 'source_id', primaryKeyConstraintName: 'source_usage_pkey' })
  sourceId!: string;

  /** The UTC day, `YYYY-MM-DD`. */
  @PrimaryColumn('date', { name: 'day', primaryKeyConstraintName: 'source_usage_pkey' })
  day!: string;

  /** PostgreSQL `bigint`, returned as a decimal string. */
  @Column({ name: 'calls', type: 'bigint', default: 0 })
  calls!: string;

  @ManyToOne(() => SourceEntity, {
    onDelete: 'CASCADE',
    createForeignKeyConstraints: true,
  })
  @JoinColumn({
    name: 'source_id',
    referencedColumnName: 'id',
    foreignKeyConstraintName: 'source_usage_source_id_fkey',
  })
  source?: Relation<SourceEntity>;
}
