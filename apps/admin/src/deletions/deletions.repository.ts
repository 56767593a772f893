import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, LessThan } from 'typeorm';

import {
  DeletionNotificationEntity,
  DeletionNotificationStatus,
  DeletionRequestEntity,
} from '@app/settings';

import { TargetRow } from './deletion.view';

/** A (source, destination) a request notifies. */
export interface Target {
  readonly source_id: string;
  readonly destination_id: string;
}

/** One delete notification: a user at a (source, destination). */
export interface NotificationRow {
  readonly id: string;
  readonly sourceId: string;
  readonly destinationId: string;
  readonly userId: string;
}

/** The fields a new request is stored with. */
export type NewDeletionRequest = Pick<
  DeletionRequestEntity,
  'userCount' | 'sourceIds' | 'createdAt'
>;

/** What an outcome changes on a notification besides its status. */
export type ReceiptDetails = Pick<DeletionNotificationEntity, 'reason' | 'attempts' | 'outcomeAt'>;

/** Receipt counts per (source, destination) of one of several requests. */
export type RequestTargetRow = TargetRow & { readonly request_id: string };

/**
 * The deletion requests' SQL: a request with its notifications stored in one transaction, the
 * publication mark, the receipts' counts, and which destinations a delete reaches.
 */
@Injectable()
export class DeletionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores the request (unpublished) and its pending notifications, all or nothing. */
  insert(
    fields: NewDeletionRequest,
    notifications: readonly NotificationRow[],
  ): Promise<DeletionRequestEntity> {
    return this.dataSource.transaction(async (m) => {
      const saved = await m.save(m.create(DeletionRequestEntity, { ...fields, publishedAt: null }));
      if (notifications.length > 0) {
        await m.query(
          `INSERT INTO "deletion_notification" ("id", "request_id", "source_id", "destination_id", "user_id")
           SELECT n.id, $1, n.source_id, n.destination_id, n.user_id
           FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[])
             AS n(id, source_id, destination_id, user_id)`,
          [
            saved.id,
            notifications.map((n) => n.id),
            notifications.map((n) => n.sourceId),
            notifications.map((n) => n.destinationId),
            notifications.map((n) => n.userId),
          ],
        );
      }
      return saved;
    });
  }

  /** Deletes a request with its notifications. */
  async remove(id: string): Promise<void> {
    await this.dataSource.getRepository(DeletionRequestEntity).delete({ id });
  }

  /** Marks it published at `at`, unless it is already. */
  async markPublished(id: string, at: Date): Promise<void> {
    await this.dataSource
      .getRepository(DeletionRequestEntity)
      .update({ id, publishedAt: IsNull() }, { publishedAt: at });
  }

  /** The oldest `limit` requests stored before `cutoff` and never marked published. */
  unpublished(cutoff: Date, limit: number): Promise<DeletionRequestEntity[]> {
    return this.dataSource.getRepository(DeletionRequestEntity).find({
      where: { publishedAt: IsNull(), createdAt: LessThan(cutoff) },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
    });
  }

  /** A request's notifications, by source and user. */
  async notificationsOf(requestId: string): Promise<NotificationRow[]> {
    const rows: { id: string; source_id: string; destination_id: string; user_id: string }[] =
      await this.dataSource.query(
        `SELECT "id", "source_id", "destination_id", "user_id" FROM "deletion_notification"
         WHERE "request_id" = $1 ORDER BY "source_id", "user_id"`,
        [requestId],
      );
    return rows.map((r) => ({
      id: r.id,
      sourceId: r.source_id,
      destinationId: r.destination_id,
      userId: r.user_id,
    }));
  }

  findById(id: string): Promise<DeletionRequestEntity | null> {
    return this.dataSource.getRepository(DeletionRequestEntity).findOneBy({ id });
  }

  /** The latest `limit` requests, newest first. */
  latest(limit: number): Promise<DeletionRequestEntity[]> {
    return this.dataSource
      .getRepository(DeletionRequestEntity)
      .find({ order: { createdAt: 'DESC', id: 'ASC' }, take: limit });
  }

  /** The receipts' counts of these requests per (source, destination). */
  receipts(requestIds: readonly string[]): Promise<RequestTargetRow[]> {
    return this.dataSource.query(
      `SELECT "request_id", "source_id", "destination_id",
         count(*) FILTER (WHERE "status" = 'delivered') AS delivered,
         count(*) FILTER (WHERE "status" = 'pending') AS pending,
         count(*) FILTER (WHERE "status" = 'failed') AS failed
       FROM "deletion_notification" WHERE "request_id" = ANY($1::uuid[])
       GROUP BY "request_id", "source_id", "destination_id"
       ORDER BY "source_id", "destination_id"`,
      [requestIds],
    );
  }

  /**
   * Moves a notification's receipt to the status `next` decides from the current one (none:
   * it stays), holding the row's lock so that concurrent outcomes of one notification are
   * applied one after the other.
   */
  updateReceipt(
    id: string,
    next: (current: DeletionNotificationStatus) => DeletionNotificationStatus | undefined,
    details: ReceiptDetails,
  ): Promise<'recorded' | 'unchanged' | 'unknown'> {
    return this.dataSource.transaction(async (m) => {
      const notification = await m.findOne(DeletionNotificationEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!notification) return 'unknown';
      const status = next(notification.status);
      if (status === undefined) return 'unchanged';
      await m.update(DeletionNotificationEntity, { id }, { status, ...details });
      return 'recorded';
    });
  }

  /** Those of the source ids that exist. */
  async existingSources(ids: readonly string[]): Promise<Set<string>> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT "id" FROM "source" WHERE "id" = ANY($1::uuid[])`,
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * The (source, destination) pairs the router would deliver a delete of these sources (null:
   * all) to: an enabled webhook destination with a webhook, of an enabled source.
   */
  affected(named: readonly string[] | null): Promise<Target[]> {
    return this.dataSource.query(
      `SELECT s."id" AS source_id, d."id" AS destination_id
       FROM "source" s JOIN "destination" d ON d."source_id" = s."id"
       WHERE s."enabled" AND d."enabled" AND d."kind" = 'webhooks'
         AND EXISTS (SELECT 1 FROM "webhook" w WHERE w."destination_id" = d."id")
         AND ($1::uuid[] IS NULL OR s."id" = ANY($1::uuid[]))
       ORDER BY s."created_at", s."id"`,
      [named],
    );
  }
}
