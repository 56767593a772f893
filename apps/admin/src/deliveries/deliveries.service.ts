import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';

import type { DeliveryState } from '@app/contracts';

import { notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { decodeCursor, DeliveryCursor, encodeCursor } from './delivery-cursor';
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

/** The SQL that places a row in the keyset order: its first attempt time in microseconds. */
const MICROS = `(extract(epoch FROM "first_attempt_at") * 1000000)::bigint::text AS "micros"`;
/** A cursor's time back as a timestamptz, exactly (no floating point). */
const FROM_MICROS = (param: string) =>
  `(TIMESTAMPTZ 'epoch' + ${param}::bigint * INTERVAL '1 microsecond')`;

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
    const where = filterSql(query, parseCursor(query.cursor));
    where.params.push(limit + 1);
    const rows: (LedgerRecord & { micros: string })[] = await this.dataSource.query(
      `SELECT ${VIEW_COLUMNS}, ${MICROS} FROM "delivery_ledger"
        ${where.sql}
        ORDER BY "first_attempt_at" DESC, "id" DESC
        LIMIT $${where.params.length}`,
      where.params,
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

/** The WHERE clause of a list query, with its parameters ($1, $2, ... in order). */
function filterSql(
  query: DeliveriesQueryDto,
  cursor: DeliveryCursor | undefined,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  const add = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  // Ids are stored as text, as the dispatcher wrote them: lowercase.
  if (query.sourceId) add((p) => `"source_id" = ${p}`, query.sourceId.toLowerCase());
  if (query.destinationId) {
    add((p) => `"destination_id" = ${p}`, query.destinationId.toLowerCase());
  }
  if (query.messageId) add((p) => `"message_id" = ${p}`, query.messageId);
  if (query.outcome) add((p) => `"state" = ${p}`, query.outcome);
  if (query.reason) add((p) => `"reason" = ${p}`, query.reason);
  if (query.from) add((p) => `"first_attempt_at" >= ${p}`, new Date(query.from));
  if (query.to) add((p) => `"first_attempt_at" < ${p}`, new Date(query.to));
  if (cursor) {
    params.push(cursor.firstAttemptMicros, cursor.id);
    const [at, id] = [`$${params.length - 1}`, `$${params.length}`];
    conditions.push(`("first_attempt_at", "id") < (${FROM_MICROS(at)}, ${id}::uuid)`);
  }
  return { sql: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}
