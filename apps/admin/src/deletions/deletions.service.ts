import { Inject, Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { BatchProducer } from '@app/kafka';
import { DeletionRequestEntity } from '@app/settings';

import { kafkaUnavailable, notFound } from '../admin.errors';
import { AdminMetrics } from '../admin.metrics';
import { Clock, CLOCK } from '../clock';
import { publishAll } from '../publish';
import { deleteRecord } from './delete-notification';
import { CreateDeletionRequestDto } from './deletion.dto';
import { DeletionRequestView, deletionRequestView } from './deletion.view';
import { DeletionsRepository } from './deletions.repository';

/** Requests the list shows, newest first. */
const LIST_LIMIT = 100;

/** Unpublished requests published again by one {@link DeletionsService.publishUnpublished}. */
const REPUBLISH_LIMIT = 20;

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
    private readonly requests: DeletionsRepository,
    private readonly producer: BatchProducer,
    private readonly metrics: AdminMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(dto: CreateDeletionRequestDto): Promise<DeletionRequestView> {
    const userIds = [...new Set(dto.userIds)];
    const named = dto.sourceIds ? [...new Set(dto.sourceIds)] : null;
    if (named) await this.ensureSources(named);
    const targets = await this.requests.affected(named);
    const createdAt = new Date(this.clock.now());
    const notifications = targets.flatMap((t) =>
      userIds.map((userId) => ({
        id: this.clock.newId(),
        sourceId: t.source_id,
        destinationId: t.destination_id,
        userId,
      })),
    );
    const request = await this.requests.insert(
      { userCount: userIds.length, sourceIds: named, createdAt },
      notifications,
    );
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
      await this.requests.remove(request.id);
      throw kafkaUnavailable('the delete notifications');
    }
    await this.requests.markPublished(request.id, new Date(this.clock.now()));
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
    const unpublished = await this.requests.unpublished(cutoff, REPUBLISH_LIMIT);
    for (const request of unpublished) {
      const rows = await this.requests.notificationsOf(request.id);
      const timestamp = request.createdAt.toISOString();
      await publishAll(
        this.producer,
        rows.map((r) => deleteRecord(r, timestamp)),
      );
      await this.requests.markPublished(request.id, new Date(this.clock.now()));
      this.logger.warn(
        `deletion request ${request.id} of ${timestamp} was never marked published: ${rows.length} notification(s) published again`,
      );
    }
    return unpublished.length;
  }

  async get(id: string): Promise<DeletionRequestView> {
    const request = isUUID(id) ? await this.requests.findById(id) : null;
    if (!request) throw notFound('deletion_request');
    const [view] = await this.withReceipts([request]);
    return view;
  }

  /** The latest requests, newest first, with their receipts. */
  async list(): Promise<DeletionRequestView[]> {
    return this.withReceipts(await this.requests.latest(LIST_LIMIT));
  }

  private async withReceipts(
    requests: readonly DeletionRequestEntity[],
  ): Promise<DeletionRequestView[]> {
    if (requests.length === 0) return [];
    const rows = await this.requests.receipts(requests.map((r) => r.id));
    return requests.map((r) =>
      deletionRequestView(
        r,
        rows.filter((row) => row.request_id === r.id),
      ),
    );
  }

  /** 404 naming the sources that do not exist. */
  private async ensureSources(ids: readonly string[]): Promise<void> {
    const found = await this.requests.existingSources(ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw notFound('source', `: ${missing.join(', ')}`);
  }
}
