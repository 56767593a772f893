import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';

import { AudienceEntity } from './audience.entity';

/** A user's value as of an audience's last committed sync (`true` for an audience). */
@Entity({ name: 'audience_member' })
export class AudienceMemberEntity {
  @PrimaryColumn('uuid', { name: 'audience_id', primaryKeyConstraintName: 'audience_member_pkey' })
  audienceId!: string;

  @PrimaryColumn('text', { name: 'user_id', primaryKeyConstraintName: 'audience_member_pkey' })
  userId!: string;

  @Column({ name: 'value', type: 'jsonb' })
  value!: unknown;

  @ManyToOne(() => AudienceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'audience_id',
    foreignKeyConstraintName: 'audience_member_audience_id_fkey',
  })
  audience?: Relation<AudienceEntity>;
}
