import { Check, Column, Entity, OneToMany, PrimaryGeneratedColumn, type Relation } from 'typeorm';

import type { DeletionNotificationEntity } from './deletion-notification.entity';

/**
 * A request to tell webhook destinations that users were deleted. Its notifications (one per
 * user and affected source) carry the receipts. Not a cached settings table: no NOTIFY.
 */
@Entity({ name: 'deletion_request' })
@Check('deletion_request_user_count_check', `"user_count" BETWEEN 1 AND 1000`)
export class DeletionRequestEntity {
  @PrimaryGeneratedColumn('uuid', { name: 'id', primaryKeyConstraintName: 'deletion_request_pkey' })
  id!: string;

  /** Distinct user ids named by the request, 1 to 1,000. */
  @Column({ name: 'user_count', type: 'integer' })
  userCount!: number;

  /** The sources the request named; null when it named none (all sources). */
  @Column({ name: 'source_ids', type: 'uuid', array: true, nullable: true })
  sourceIds!: string[] | null;

  /** When the request was made: the `timestamp` of its delete notifications. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** When Kafka acknowledged every notification; null until then (or if that never happened). */
  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  /** The notifications, when loaded. */
  @OneToMany('DeletionNotificationEntity', (n: DeletionNotificationEntity) => n.request)
  notifications?: Relation<DeletionNotificationEntity[]>;
}
