import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';

import { AudienceSyncEntity } from './audience-sync.entity';

/** A member uploaded to an open sync, with its value (`true` for an audience). */
@Entity({ name: 'audience_sync_member' })
export class AudienceSyncMemberEntity {
  @PrimaryColumn('uuid', { name: 'sync_id', primaryKeyConstraintName: 'audience_sync_member_pkey' })
  syncId!: string;

  @PrimaryColumn('text', { name: 'user_id', primaryKeyConstraintName: 'audience_sync_member_pkey' })
  userId!: string;

  @Column({ name: 'value', type: 'jsonb' })
  value!: unknown;

  @ManyToOne(() => AudienceSyncEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'sync_id',
    foreignKeyConstraintName: 'audience_sync_member_sync_id_fkey',
  })
  sync?: Relation<AudienceSyncEntity>;
}
