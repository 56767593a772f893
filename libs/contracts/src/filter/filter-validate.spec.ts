import {
  MAX_FILTER_CLAUSES,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LIST_ITEMS,
  validateFilter,
} from './filter-validate';

const clause = (n = 0) => ({ field: 'properties.total', op: 'gte', value: n });

/** `{not: {not: ... clause}}` with `levels` levels in all. */
function nested(levels: number): unknown {
  let predicate: unknown = clause();
  for (let level = 1; level < levels; level += 1) predicate = { not: predicate };
  return predicate;
}

describe(validateFilter.name, () => {
  it.each([
    ['an empty filter', {}],
    ['types', { types: ['track', 'page'] }],
    ['events and prefixes', { events: ['Order Completed'], eventPrefixes: ['Checkout '] }],
    ['a comparison', { where: clause(100) }],
    [
      'and, or, not',
      {
        where: {
          and: [
            clause(),
            { or: [{ field: 'event', op: 'prefix', value: 'Order' }, { not: clause(5) }] },
          ],
        },
      },
    ],
    ['eq null', { where: { field: 'traits.plan', op: 'eq', value: null } }],
    ['ne boolean', { where: { field: 'properties.test', op: 'ne', value: true } }],
    ['lt a string', { where: { field: 'timestamp', op: 'lt', value: '2026-01-01' } }],
    ['in scalars', { where: { field: 'properties.plan', op: 'in', value: ['a', 1, null] } }],
    ['exists without a value', { where: { field: 'userId', op: 'exists' } }],
    ['exists false', { where: { field: 'userId', op: 'exists', value: false } }],
    ['suffix', { where: { field: 'traits.email', op: 'suffix', value: '@example.com' } }],
    ['an array index', { where: { field: 'properties.products.0.sku', op: 'eq', value: 'x' } }],
    ['nesting at the limit', { where: nested(MAX_FILTER_DEPTH) }],
    [
      'clauses at the limit',
      { where: { and: Array.from({ length: MAX_FILTER_CLAUSES }, (_, i) => clause(i)) } },
    ],
  ])('takes %s', (_name, filter) => {
    expect(validateFilter(filter)).toEqual({ ok: true, filter });
  });

  it.each([
    ['not an object', [], 'filter', 'wrong_type'],
    ['an unknown key', { type: ['track'] }, 'filter.type', 'unknown_key'],
    ['types not a list', { types: 'track' }, 'filter.types', 'wrong_type'],
    ['an empty type list', { types: [] }, 'filter.types', 'empty_list'],
    ['an unknown call type', { types: ['track', 'click'] }, 'filter.types[1]', 'unknown_call_type'],
    ['delete as a type', { types: ['delete'] }, 'filter.types[0]', 'unknown_call_type'],
    ['an event that is a number', { events: ['a', 3] }, 'filter.events[1]', 'wrong_type'],
    ['an empty prefix', { eventPrefixes: [''] }, 'filter.eventPrefixes[0]', 'wrong_type'],
    [
      'too many events',
      { events: Array.from({ length: MAX_FILTER_LIST_ITEMS + 1 }, (_, i) => `e${i}`) },
      'filter.events',
      'list_too_long',
    ],
    ['a long string', { events: ['x'.repeat(1025)] }, 'filter.events[0]', 'string_too_long'],
    ['where not an object', { where: 'x' }, 'filter.where', 'wrong_type'],
    ['a clause of nothing', { where: {} }, 'filter.where', 'missing_key'],
    [
      'and with field',
      { where: { and: [clause()], ...clause() } },
      'filter.where',
      'ambiguous_clause',
    ],
    ['and not a list', { where: { and: clause() } }, 'filter.where.and', 'wrong_type'],
    ['an empty or', { where: { or: [] } }, 'filter.where.or', 'empty_list'],
    [
      'a field not a string',
      { where: { field: 3, op: 'eq', value: 1 } },
      'filter.where.field',
      'wrong_type',
    ],
    [
      'an empty path segment',
      { where: { field: 'a..b', op: 'eq', value: 1 } },
      'filter.where.field',
      'invalid_field',
    ],
    [
      'an unknown operator',
      { where: { and: [clause(), { field: 'a', op: '$gte', value: 1 }] } },
      'filter.where.and[1].op',
      'unknown_operator',
    ],
    [
      'a wrong value type',
      { where: { and: [clause(), { field: 'a', op: 'gte', value: { n: 1 } }] } },
      'filter.where.and[1].value',
      'wrong_value_type',
    ],
    [
      'gt true',
      { where: { field: 'a', op: 'gt', value: true } },
      'filter.where.value',
      'wrong_value_type',
    ],
    [
      'eq a list',
      { where: { field: 'a', op: 'eq', value: [1] } },
      'filter.where.value',
      'wrong_value_type',
    ],
    [
      'in a scalar',
      { where: { field: 'a', op: 'in', value: 1 } },
      'filter.where.value',
      'wrong_value_type',
    ],
    [
      'in an object',
      { where: { field: 'a', op: 'in', value: [{}] } },
      'filter.where.value[0]',
      'wrong_value_type',
    ],
    [
      'exists a string',
      { where: { field: 'a', op: 'exists', value: 'y' } },
      'filter.where.value',
      'wrong_value_type',
    ],
    [
      'prefix a number',
      { where: { field: 'a', op: 'prefix', value: 1 } },
      'filter.where.value',
      'wrong_value_type',
    ],
    [
      'an unknown clause key',
      { where: { ...clause(), also: 1 } },
      'filter.where.also',
      'unknown_key',
    ],
    [
      'nesting beyond the limit',
      { where: nested(MAX_FILTER_DEPTH + 1) },
      `filter.where${'.not'.repeat(MAX_FILTER_DEPTH)}`,
      'too_deep',
    ],
    [
      'too many clauses',
      { where: { or: Array.from({ length: MAX_FILTER_CLAUSES + 1 }, (_, i) => clause(i)) } },
      `filter.where.or[${MAX_FILTER_CLAUSES}]`,
      'too_many_clauses',
    ],
  ])('refuses %s at its path with a code', (_name, filter, path, code) => {
    const result = validateFilter(filter);
    expect(result).toMatchObject({ ok: false, problem: { path, code } });
    if (!result.ok) expect(result.problem.message.startsWith(`${path}: `)).toBe(true);
  });
});
