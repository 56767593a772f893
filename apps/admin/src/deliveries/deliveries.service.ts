import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';

import type { DeliveryState } from '@app/contracts';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { decodeCursor, DeliveryCursor, encodeCursor } from './delivery-cursor';
import { filterSql, listSql } from './delivery-filter';
import { DEFAULT_PAGE_ITEMS, DeliveriesQueryDto, OUTCOMES } from './delivery.dto';
import {
  DeliveryDetailView,
  deliveryDetailView,
  DeliveryView,
  deliveryView,
  DestinationNames,
  LedgerRecord,
  VIEW_COLUMNS,
} from './delivery.view';

/** A page of deliveries, newest first. */
export interface DeliveriesPage {
  readonly items: DeliveryView[];
  /** Pass it as `cursor` for the next page; null on the last one. */
  readonly nextCursor: string | null;
}

/** Ledger rows counted by outcome since a time. */
export interface DeliveryStats {
  readonly since: string;
  readonly counts: Record<DeliveryState, number>;
}

/**
 * Reads the delivery ledger: pages of deliveries in a stable order (keyset pagination on
 * first attempt time and id, so a page boundary holds while rows are added), one delivery
 * with its attempts, and counts by outcome.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Deliveries matching the query, newest first attempt first. */
  async list(query: DeliveriesQueryDto): Promise<DeliveriesPage> {
    const limit = query.limit ?? DEFAULT_PAGE_ITEMS;
    const byUrl = query.webhookUrl ? await this.destinationsWithUrl(query.webhookUrl) : undefined;
    const statement = listSql(filterSql(query, parseCursor(query.cursor), byUrl), limit);
    const rows: (LedgerRecord & { micros: string })[] = await this.dataSource.query(
      statement.sql,
      statement.params,
    );
    const page = rows.slice(0, limit);
    const names = await this.destinationNames(page);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => deliveryView(row, names)),
      nextCursor:
        rows.length > limit ? encodeCursor({ firstAttemptMicros: last.micros, id: last.id }) : null,
    };
  }

  /** The destinations that have a webhook with this URL now (ids as the ledger keeps them). */
  private async destinationsWithUrl(url: string): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT DISTINCT "destination_id"::text AS "id" FROM "webhook" WHERE "url" = $1`,
      [url],
    );
    return rows.map((row) => row.id);
  }

  /** One delivery with its attempts, or 404. */
  async get(id: string): Promise<DeliveryDetailView> {
    const row = await this.find(id);
    return deliveryDetailView(row, await this.destinationNames([row]));
  }

  /**
   * The names of the destinations of these rows, in one query by primary key (a page holds
   * at most a few hundred rows); a destination deleted since has none.
   */
  private async destinationNames(rows: readonly LedgerRecord[]): Promise<DestinationNames> {
    const ids = [...new Set(rows.map((r) => r.destination_id))].filter((id) => isUUID(id));
    if (ids.length === 0) return new Map();
    const found: { id: string; name: string }[] = await this.dataSource.query(
      `SELECT "id", "name" FROM "destination" WHERE "id" = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(found.map((d) => [d.id, d.name]));
  }

  /** The ledger row of a delivery, or 404. */
  async find(id: string): Promise<LedgerRecord> {
    const rows: LedgerRecord[] = await this.dataSource.query(
      `SELECT ${VIEW_COLUMNS}, "history" FROM "delivery_ledger" WHERE "id" = $1
        ORDER BY "first_attempt_at" DESC LIMIT 1`,
      [id],
    );
    if (rows.length === 0) throw notFound('delivery');
    return rows[0];
  }

  /** Rows by outcome whose last outcome came in the last `minutes`. */
  async stats(minutes: number): Promise<DeliveryStats> {
    const since = new Date(this.clock.now() - minutes * 60_000);
    const rows: { state: DeliveryState; count: string }[] = await this.dataSource.query(
      `SELECT "state", count(*) AS "count" FROM "delivery_ledger"
        WHERE "updated_at" >= $1 GROUP BY "state"`,
      [since],
    );
    const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<DeliveryState, number>;
    for (const row of rows) counts[row.state] = Number(row.count);
    return { since: since.toISOString(), counts };
  }
}

function parseCursor(text: string | undefined): DeliveryCursor | undefined {
  if (text === undefined) return undefined;
  const cursor = decodeCursor(text);
  if (!cursor) {
    throw new BadRequestException({
      code: 'invalid_cursor',
      message: 'cursor: not a cursor this API gave (pass a nextCursor back unchanged)',
    });
  }
  return cursor;
}
