import type { DeliveryCursor } from './delivery-cursor';
import type { DeliveriesQueryDto } from './delivery.dto';
import { VIEW_COLUMNS } from './delivery.view';

/** A WHERE clause and its parameters ($1, $2, ... in order). */
export interface FilterSql {
  readonly sql: string;
  readonly params: unknown[];
}

/** The SQL that places a row in the keyset order: its first attempt time in microseconds. */
const MICROS = `(extract(epoch FROM "first_attempt_at") * 1000000)::bigint::text AS "micros"`;

/** A cursor's time back as a timestamptz, exactly (no floating point). */
const FROM_MICROS = (param: string) =>
  `(TIMESTAMPTZ 'epoch' + ${param}::bigint * INTERVAL '1 microsecond')`;

/**
 * The WHERE clause of a list query. Each filter narrows the rows; `user` matches either id
 * (each has an index in the list's order). `webhookDestinationIds` are the destinations that
 * have the asked webhook URL, looked up beforehand; empty matches nothing. The cursor
 * continues after the last row shown, in the order first attempt descending, id descending.
 */
export function filterSql(
  query: DeliveriesQueryDto,
  cursor: DeliveryCursor | undefined,
  webhookDestinationIds?: readonly string[],
): FilterSql {
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
  if (webhookDestinationIds) {
    add((p) => `"destination_id" = ANY(${p}::text[])`, webhookDestinationIds);
  }
  if (query.messageId) add((p) => `"message_id" = ${p}`, query.messageId);
  if (query.user) add((p) => `("user_id" = ${p} OR "anonymous_id" = ${p})`, query.user);
  if (query.userId) add((p) => `"user_id" = ${p}`, query.userId);
  if (query.anonymousId) add((p) => `"anonymous_id" = ${p}`, query.anonymousId);
  if (query.event) add((p) => `"event" = ${p}`, query.event);
  if (query.type) add((p) => `"call_type" = ${p}`, query.type);
  if (query.status !== undefined) add((p) => `"last_status" = ${p}`, query.status);
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

/**
 * The statement of a page: the filtered rows in the list's order, one more than `limit` (it
 * tells whether a next page exists). Its parameters are the filter's, then the limit.
 */
export function listSql(where: FilterSql, limit: number): FilterSql {
  const params = [...where.params, limit + 1];
  return {
    sql: `SELECT ${VIEW_COLUMNS}, ${MICROS} FROM "delivery_ledger"
        ${where.sql}
        ORDER BY "first_attempt_at" DESC, "id" DESC
        LIMIT $${params.length}`,
    params,
  };
}
