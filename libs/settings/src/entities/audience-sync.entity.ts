import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';

import { AudienceEntity } from './audience.entity';

/** An open sync takes pages of members; a committed one is history. */
export type AudienceSyncStatus = 'open' | 'committed';

/**
 * One sync of an audience's full member list: opened, filled page by page
 * (`audience_sync_member`), then committed. The counts are set at commit.
 */
@Entity({ name: 'audience_sync' })
@Check('audience_sync_status_check', `"status" IN ('open', 'committed')`)
export class AudienceSyncEntity {
  @PrimaryGeneratedColumn('uuid', { name: 'id', primaryKeyConstraintName: 'audience_sync_pkey' })
  id!: string;

  @Column({ name: 'audience_id', type: 'uuid' })
  audienceId!: string;

  @ManyToOne(() => AudienceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'audience_id', foreignKeyConstraintName: 'audience_sync_audience_id_fkey' })
  audience?: Relation<AudienceEntity>;

  @Column({ name: 'status', type: 'text', default: 'open' })
  status!: AudienceSyncStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'committed_at', type: 'timestamptz', nullable: true })
  committedAt!: Date | null;

  /** Members in the committed list. */
  @Column({ name: 'member_count', type: 'integer', nullable: true })
  memberCount!: number | null;

  /** Users who joined (audience) or got a first value (computed trait). */
  @Column({ name: 'joined_count', type: 'integer', nullable: true })
  joinedCount!: number | null;

  /** Users who left (sent `false`, or `null` for a computed trait). */
  @Column({ name: 'left_count', type: 'integer', nullable: true })
  leftCount!: number | null;

  /** Users whose computed value changed. */
  @Column({ name: 'changed_count', type: 'integer', nullable: true })
  changedCount!: number | null;
}
