import type { DeletionRequestEntity } from '@app/settings';

/** Receipts of notifications: delivered, pending (no outcome yet) and failed (dead, discarded). */
export interface ReceiptCounts {
  readonly notifications: number;
  readonly delivered: number;
  readonly pending: number;
  readonly failed: number;
}

/** The receipts of one (source, destination) a request notified. */
export interface DeletionTargetView extends ReceiptCounts {
  readonly sourceId: string;
  readonly destinationId: string;
}

/** A deletion request as the API shows it. */
export interface DeletionRequestView {
  readonly id: string;
  readonly createdAt: string;
  /** When Kafka acknowledged every notification; null if the admin app stopped before. */
  readonly publishedAt: string | null;
  readonly userCount: number;
  /** The sources the request named; null for all. */
  readonly sourceIds: string[] | null;
  readonly totals: ReceiptCounts;
  readonly targets: DeletionTargetView[];
}

/** A row of the receipts query: counts per (source, destination) as text (bigint). */
export interface TargetRow {
  readonly source_id: string;
  readonly destination_id: string;
  readonly delivered: string;
  readonly pending: string;
  readonly failed: string;
}

export function deletionRequestView(
  request: DeletionRequestEntity,
  rows: readonly TargetRow[],
): DeletionRequestView {
  const targets = rows.map((row): DeletionTargetView => {
    const delivered = Number(row.delivered);
    const pending = Number(row.pending);
    const failed = Number(row.failed);
    return {
      sourceId: row.source_id,
      destinationId: row.destination_id,
      notifications: delivered + pending + failed,
      delivered,
      pending,
      failed,
    };
  });
  const sum = (field: keyof ReceiptCounts) => targets.reduce((n, t) => n + t[field], 0);
  return {
    id: request.id,
    createdAt: request.createdAt.toISOString(),
    publishedAt: request.publishedAt?.toISOString() ?? null,
    userCount: request.userCount,
    sourceIds: request.sourceIds,
    totals: {
      notifications: sum('notifications'),
      delivered: sum('delivered'),
      pending: sum('pending'),
      failed: sum('failed'),
    },
    targets,
  };
}
