import { filterSql } from './delivery-filter';
import type { DeliveriesQueryDto } from './delivery.dto';

const SOURCE = '6F1D6C1A-3B1A-4C55-9A51-3D4E0B0C1D2E';

describe(filterSql.name, () => {
  it.each<[string, DeliveriesQueryDto, string, unknown[]]>([
    ['nothing without filters', {}, '', []],
    ['a source id in lower case', { sourceId: SOURCE }, '"source_id" = $1', [SOURCE.toLowerCase()]],
    ['a user by either id', { user: 'u-1' }, '("user_id" = $1 OR "anonymous_id" = $1)', ['u-1']],
    ['a userId', { userId: 'u-1' }, '"user_id" = $1', ['u-1']],
    ['an anonymousId', { anonymousId: 'a-1' }, '"anonymous_id" = $1', ['a-1']],
    ['an event name', { event: 'Order Completed' }, '"event" = $1', ['Order Completed']],
    ['a call type', { type: 'page' }, '"call_type" = $1', ['page']],
    ['a status code', { status: 503 }, '"last_status" = $1', [503]],
    ['an outcome', { outcome: 'dead' }, '"state" = $1', ['dead']],
    [
      'a time range, the end excluded',
      { from: '2030-01-01T00:00:00Z', to: '2030-01-02' },
      '"first_attempt_at" >= $1 AND "first_attempt_at" < $2',
      [new Date('2030-01-01T00:00:00Z'), new Date('2030-01-02')],
    ],
  ])('filters %s', (_what, query, conditions, params) => {
    const { sql, params: given } = filterSql(query, undefined);
    expect(sql).toBe(conditions === '' ? '' : `WHERE ${conditions}`);
    expect(given).toEqual(params);
  });

  it('matches the destinations of a webhook URL, none when no webhook has it', () => {
    expect(filterSql({ webhookUrl: 'https://x.test/' }, undefined, [])).toEqual({
      sql: 'WHERE "destination_id" = ANY($1::text[])',
      params: [[]],
    });
  });

  it('continues after the cursor, its parameters last', () => {
    const id = '0d1b6c1a-3b1a-4c55-9a51-3d4e0b0c1d2e';
    const { sql, params } = filterSql(
      { userId: 'u-1' },
      { firstAttemptMicros: '1700000000000000', id },
    );
    expect(sql).toBe(
      'WHERE "user_id" = $1 AND ("first_attempt_at", "id") < ' +
        "((TIMESTAMPTZ 'epoch' + $2::bigint * INTERVAL '1 microsecond'), $3::uuid)",
    );
    expect(params).toEqual(['u-1', '1700000000000000', id]);
  });
});
