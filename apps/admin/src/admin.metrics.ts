import { Injectable } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Counter, Histogram } from 'prom-client';

import { Metrics } from '@app/observability';

/** Counts admin API requests by route template, method and status (ids never become labels). */
export function countAdminRequests(app: NestFastifyApplication): void {
  const requests = app
    .get(Metrics)
    .counter('sluice_admin_requests_total', 'Admin API requests', ['route', 'method', 'status']);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route?.startsWith('/admin/')) {
        requests.inc({ route, method: request.method, status: String(reply.statusCode) });
      }
      done();
    });
}

/** Buckets of sync sizes (members) and identifies sent, 1 to 1,000,000. */
const SIZE_BUCKETS = [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

/** The admin app's metrics of deletions and syncs. Labels are bounded (kinds, results). */
@Injectable()
export class AdminMetrics {
  /** Deletion requests created. */
  readonly deletionRequests: Counter;
  /** Delete notifications acknowledged by Kafka. */
  readonly deleteNotifications: Counter;
  /** Delivery outcomes read, by result and what they did to a receipt. */
  readonly outcomes: Counter<'result' | 'effect'>;
  /** Syncs committed, by kind (audience, computed_trait). */
  readonly syncs: Counter<'kind'>;
  /** Identifies a sync published (acknowledged by Kafka), by kind and change. */
  readonly syncIdentifies: Counter<'kind' | 'change'>;
  /** Members in a committed sync's list, by kind. */
  readonly syncMembers: Histogram<'kind'>;
  /** Time to commit a sync (diff, publish, store), by kind. */
  readonly syncSeconds: Histogram<'kind'>;

  constructor(metrics: Metrics) {
    this.deletionRequests = metrics.counter(
      'sluice_admin_deletion_requests_total',
      'Deletion requests created',
    );
    this.deleteNotifications = metrics.counter(
      'sluice_admin_delete_notifications_published_total',
      'Delete notifications published (acknowledged by Kafka)',
    );
    this.outcomes = metrics.counter(
      'sluice_admin_delivery_outcomes_total',
      'Delivery outcomes read from sluice.deliveries.outcomes.v1',
      ['result', 'effect'],
    );
    this.syncs = metrics.counter('sluice_admin_syncs_total', 'Syncs committed', ['kind']);
    this.syncIdentifies = metrics.counter(
      'sluice_admin_sync_identifies_published_total',
      'Identifies published by syncs (acknowledged by Kafka)',
      ['kind', 'change'],
    );
    this.syncMembers = metrics.histogram(
      'sluice_admin_sync_members',
      'Members in the list of a committed sync',
      SIZE_BUCKETS,
      ['kind'],
    );
    this.syncSeconds = metrics.histogram(
      'sluice_admin_sync_commit_duration_seconds',
      'Time to commit a sync: diff, publish until acks=all, store',
      [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
      ['kind'],
    );
  }
}
