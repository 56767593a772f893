import {
  Check,
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  Unique,
  type Relation,
} from 'typeorm';

import { DeletionRequestEntity } from './deletion-request.entity';

/** A notification's receipt: waiting for the dispatcher's outcome, delivered, or failed. */
export type DeletionNotificationStatus = 'pending' | 'delivered' | 'failed';

/**
 * One `delete` notification: one user of a request, sent to one source's webhook
 * destination. Its id is the notification's message id (the `sluice-message-id` header), by
 * which the dispatcher's outcome finds it. Source and destination are kept as plain ids, so
 * the receipt outlives a source deleted since.
 */
@Entity({ name: 'deletion_notification' })
@Unique('deletion_notification_request_destination_user_unique', [
  'requestId',
  'sourceId',
  'destinationId',
  'userId',
])
@Check('deletion_notification_status_check', `"status" IN ('pending', 'delivered', 'failed')`)
export class DeletionNotificationEntity {
  @PrimaryColumn('uuid', { name: 'id', primaryKeyConstraintName: 'deletion_notification_pkey' })
  id!: string;

  @Column({ name: 'request_id', type: 'uuid' })
  requestId!: string;

  @ManyToOne(() => DeletionRequestEntity, (r) => r.notifications, {
    onDelete: 'CASCADE',
    nullable: false,
  })
  @JoinColumn({
    name: 'request_id',
    foreignKeyConstraintName: 'deletion_notification_request_id_fkey',
  })
  request?: Relation<DeletionRequestEntity>;

  @Column({ name: 'source_id', type: 'uuid' })
  sourceId!: string;

  @Column({ name: 'destination_id', type: 'uuid' })
  destinationId!: string;

  @Column({ name: 'user_id', type: 'text' })
  userId!: string;

  @Column({ name: 'status', type: 'text', default: 'pending' })
  status!: DeletionNotificationStatus;

  /** Why it failed (the outcome's stable code). */
  @Column({ name: 'reason', type: 'text', nullable: true })
  reason!: string | null;

  /** Attempts the dispatcher made, from the outcome. */
  @Column({ name: 'attempts', type: 'integer', nullable: true })
  attempts!: number | null;

  /** When the recorded outcome was reached. */
  @Column({ name: 'outcome_at', type: 'timestamptz', nullable: true })
  outcomeAt!: Date | null;
}
