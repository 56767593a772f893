import { Inject, Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, IsNull, LessThan } from 'typeorm';

import { BatchProducer } from '@app/kafka';
import { DeletionRequestEntity } from '@app/settings';

import { kafkaUnavailable, notFound } from '../admin.errors';
import { AdminMetrics } from '../admin.metrics';
import { Clock, CLOCK } from '../clock';
import { publishAll } from '../publish';
import { deleteRecord } from './delete-notification';
import { CreateDeletionRequestDto } from './deletion.dto';
import { DeletionRequestView, deletionRequestView, TargetRow } from './deletion.view';

/** Requests the list shows, newest first. */
const LIST_LIMIT = 100;

/** Unpublished requests published again by one {@link DeletionsService.publishUnpublished}. */
const REPUBLISH_LIMIT = 20;

/** A (source, destination) a request notifies. */
interface Target {
  readonly source_id: string;
  readonly destination_id: string;
}

/**
 * Deletion requests: one `delete` notification per user and affected destination (an enabled
 * webhook destination with a webhook, of an enabled source, as the router routes), published
 * to `sluice.calls.v1` naming that destination. The notifications are stored (pending) before they are
 * published, so no outcome can arrive for a notification not yet stored; if Kafka does not
 * acknowledge them, the request is removed again and the answer is 503.
 */
@Injectable()
export class DeletionsService {
  private readonly logger = new Logger(DeletionsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly producer: BatchProducer,
    private readonly metrics: AdminMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(dto: CreateDeletionRequestDto): Promise<DeletionRequestView> {
    const userIds = [...new Set(dto.userIds)];
    const named = dto.sourceIds ? [...new Set(dto.sourceIds)] : null;
    if (named) await this.ensureSources(named);
    const targets = await this.affected(named);
    const createdAt = new Date(this.clock.now());
    const notifications = targets.flatMap((t) =>
      userIds.map((userId) => ({
        id: this.clock.newId(),
        sourceId: t.source_id,
        destinationId: t.destination_id,
        userId,
      })),
    );
    const requests = this.dataSource.getRepository(DeletionRequestEntity);
    const request = await this.dataSource.transaction(async (m) => {
      const saved = await m.save(
        m.create(DeletionRequestEntity, {
          userCount: userIds.length,
          sourceIds: named,
          createdAt,
          publishedAt: null,
        }),
      );
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
    const timestamp = createdAt.toISOString();
    try {
      await publishAll(
        this.producer,
        notifications.map((n) => deleteRecord(n, timestamp)),
      );
    } catch (error) {
      this.logger.warn(
        `deletion request ${request.id}: Kafka did not take ${notifications.length} notification(s), request removed: ${String(error)}`,
      );
      await requests.delete({ id: request.id });
      throw kafkaUnavailable('the delete notifications');
    }
    await requests.update({ id: request.id }, { publishedAt: new Date(this.clock.now()) });
    this.metrics.deletionRequests.inc();
    this.metrics.deleteNotifications.inc(notifications.length);
    this.logger.log(
      `deletion request ${request.id}: ${notifications.length} notification(s) published for ${userIds.length} user(s) and ${targets.length} source(s)`,
    );
    return this.get(request.id);
  }

  /**
   * Publishes the notifications of requests stored before `cutoff` and never marked published:
   * the app stopped between storing a request and Kafka's acknowledgement, or between that
   * and the mark (or could not remove a request Kafka refused). A notification may so go out
   * twice; deliveries are at least once anyway, and a user deleted twice is deleted. Oldest
   * first; throws when Kafka does not take a request's notifications (the rest wait for the
   * next call).
   * @returns how many requests were published
   */
  async publishUnpublished(cutoff: Date): Promise<number> {
    const requests = this.dataSource.getRepository(DeletionRequestEntity);
    const unpublished = await requests.find({
      where: { publishedAt: IsNull(), createdAt: LessThan(cutoff) },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: REPUBLISH_LIMIT,
    });
    for (const request of unpublished) {
      const rows: { id: string; source_id: string; destination_id: string; user_id: string }[] =
        await this.dataSource.query(
          `SELECT "id", "source_id", "destination_id", "user_id" FROM "deletion_notification"
           WHERE "request_id" = $1 ORDER BY "source_id", "user_id"`,
          [request.id],
        );
      const timestamp = request.createdAt.toISOString();
      await publishAll(
        this.producer,
        rows.map((r) =>
          deleteRecord(
            { id: r.id, sourceId: r.source_id, destinationId: r.destination_id, userId: r.user_id },
            timestamp,
          ),
        ),
      );
      await requests.update(
        { id: request.id, publishedAt: IsNull() },
        { publishedAt: new Date(this.clock.now()) },
      );
      this.logger.warn(
        `deletion request ${request.id} of ${timestamp} was never marked published: ${rows.length} notification(s) published again`,
      );
    }
    return unpublished.length;
  }

  async get(id: string): Promise<DeletionRequestView> {
    const request = isUUID(id)
      ? await this.dataSource.getRepository(DeletionRequestEntity).findOneBy({ id })
      : null;
    if (!request) throw notFound('deletion_request');
    const [view] = await this.withReceipts([request]);
    return view;
  }

  /** The latest requests, newest first, with their receipts. */
  async list(): Promise<DeletionRequestView[]> {
    const requests = await this.dataSource
      .getRepository(DeletionRequestEntity)
      .find({ order: { createdAt: 'DESC', id: 'ASC' }, take: LIST_LIMIT });
    return this.withReceipts(requests);
  }

  private async withReceipts(
    requests: readonly DeletionRequestEntity[],
  ): Promise<DeletionRequestView[]> {
    if (requests.length === 0) return [];
    const rows: (TargetRow & { request_id: string })[] = await this.dataSource.query(
      `SELECT "request_id", "source_id", "destination_id",
         count(*) FILTER (WHERE "status" = 'delivered') AS delivered,
         count(*) FILTER (WHERE "status" = 'pending') AS pending,
         count(*) FILTER (WHERE "status" = 'failed') AS failed
       FROM "deletion_notification" WHERE "request_id" = ANY($1::uuid[])
       GROUP BY "request_id", "source_id", "destination_id"
       ORDER BY "source_id", "destination_id"`,
      [requests.map((r) => r.id)],
    );
    return requests.map((r) =>
      deletionRequestView(
        r,
        rows.filter((row) => row.request_id === r.id),
      ),
    );
  }

  /** 404 naming the sources that do not exist. */
  private async ensureSources(ids: readonly string[]): Promise<void> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT "id" FROM "source" WHERE "id" = ANY($1::uuid[])`,
      [ids],
    );
    const found = new Set(rows.map((row) => row.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw notFound('source', `: ${missing.join(', ')}`);
  }

  /** The (source, destination) pairs the router would deliver a delete of these sources to. */
  private affected(named: readonly string[] | null): Promise<Target[]> {
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
