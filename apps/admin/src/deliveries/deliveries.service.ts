import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { DeliveryState } from '@app/contracts';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { DeliveriesRepository } from './deliveries.repository';
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
    private readonly ledger: DeliveriesRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Deliveries matching the query, newest first attempt first. */
  async list(query: DeliveriesQueryDto): Promise<DeliveriesPage> {
    const limit = query.limit ?? DEFAULT_PAGE_ITEMS;
    const byUrl = query.webhookUrl
      ? await this.ledger.destinationsWithUrl(query.webhookUrl)
      : undefined;
    const rows = await this.ledger.page(
      listSql(filterSql(query, parseCursor(query.cursor), byUrl), limit),
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
    return ids.length === 0 ? new Map() : this.ledger.destinationNames(ids);
  }

  /** The ledger row of a delivery, or 404. */
  async find(id: string): Promise<LedgerRecord> {
    const row = await this.ledger.find(id);
    if (!row) throw notFound('delivery');
    return row;
  }

  /** Rows by outcome whose last outcome came in the last `minutes`. */
  async stats(minutes: number): Promise<DeliveryStats> {
    const since = new Date(this.clock.now() - minutes * 60_000);
    const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<DeliveryState, number>;
    for (const row of await this.ledger.countsSince(since)) counts[row.state] = row.count;
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
