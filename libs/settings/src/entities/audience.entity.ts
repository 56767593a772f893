import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';

import { SourceEntity } from './source.entity';

/** An audience (a membership, trait value `true`/`false`) or a computed trait (any value). */
export type AudienceKind = 'audience' | 'computed_trait';

/**
 * An audience or computed trait of a source: synced to the source's calls as identifies
 * carrying `traits: { <key>: value }`. Keys are unique per source across both kinds, since
 * they name the same trait. Not a cached settings table: no NOTIFY.
 */
@Entity({ name: 'audience' })
@Unique('audience_source_key_unique', ['sourceId', 'key'])
@Check('audience_kind_check', `"kind" IN ('audience', 'computed_trait')`)
@Check('audience_key_check', `"key" ~ '^[a-z0-9_]+$'`)
export class AudienceEntity {
  @PrimaryGeneratedColumn('uuid', { name: 'id', primaryKeyConstraintName: 'audience_pkey' })
  id!: string;

  @Column({ name: 'source_id', type: 'uuid' })
  sourceId!: string;

  @ManyToOne(() => SourceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'source_id', foreignKeyConstraintName: 'audience_source_id_fkey' })
  source?: Relation<SourceEntity>;

  @Column({ name: 'kind', type: 'text' })
  kind!: AudienceKind;

  @Column({ name: 'name', type: 'text' })
  name!: string;

  /** The trait key: the snake_case form of the name. */
  @Column({ name: 'key', type: 'text' })
  key!: string;

  /** Members (users with a value) as of the last committed sync. */
  @Column({ name: 'member_count', type: 'integer', default: 0 })
  memberCount!: number;

  @Column({ name: 'last_synced_at', type: 'timestamptz', nullable: true })
  lastSyncedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
