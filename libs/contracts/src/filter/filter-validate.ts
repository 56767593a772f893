import { CALL_TYPES, type CallType } from '../calls';
import { asJsonObject } from '../json';

/** Levels of `and`/`or`/`not` a filter's `where` may nest, the `where` clause being level 1. */
export const MAX_FILTER_DEPTH = 5;
/** Comparisons (`field` clauses) one filter's `where` may hold in all. */
export const MAX_FILTER_CLAUSES = 20;
/** Items a list in a filter (`events`, `eventPrefixes`, an `in` value) may hold. */
export const MAX_FILTER_LIST_ITEMS = 100;
/** Characters a string in a filter (an event name, a prefix, a compared value) may have. */
export const MAX_FILTER_STRING_CHARS = 1_024;
/** Dot-separated segments a field path may have (`properties.order.total` has 3). */
export const MAX_FIELD_PATH_SEGMENTS = 10;

/** The comparison operators of a `field` clause. */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'exists',
  'prefix',
  'suffix',
] as const;

export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** A JSON scalar a clause compares with. */
export type FilterScalar = string | number | boolean | null;

/** A predicate over a call's JSON: a comparison, or `and`/`or`/`not` of predicates. */
export type FilterPredicate =
  | { readonly and: readonly FilterPredicate[] }
  | { readonly or: readonly FilterPredicate[] }
  | { readonly not: FilterPredicate }
  | {
      readonly field: string;
      readonly op: FilterOperator;
      readonly value?: FilterScalar | readonly FilterScalar[];
    };

/**
 * Which calls a destination takes (docs/api.md, "Destination filters"). Every part given must
 * match; a part left out matches every call.
 */
export interface DestinationFilter {
  /** Call types taken. */
  readonly types?: readonly CallType[];
  /** Event names taken (a track's `event`, a page's or screen's `name`), exactly. */
  readonly events?: readonly string[];
  /** Event name prefixes taken; with `events`, a name matching either is taken. */
  readonly eventPrefixes?: readonly string[];
  /** A predicate over the call's JSON fields. */
  readonly where?: FilterPredicate;
}

/** Why a filter is refused: a stable code, with the path of the bad part. */
export type FilterProblemCode =
  | 'wrong_type'
  | 'unknown_key'
  | 'missing_key'
  | 'empty_list'
  | 'list_too_long'
  | 'string_too_long'
  | 'unknown_call_type'
  | 'invalid_field'
  | 'unknown_operator'
  | 'wrong_value_type'
  | 'ambiguous_clause'
  | 'too_deep'
  | 'too_many_clauses';

/** The first bad part of a filter. */
export interface FilterProblem {
  /** Where it is, from `filter`: `filter.where.and[1].value`. */
  readonly path: string;
  readonly code: FilterProblemCode;
  /** Says what is wrong, starting with the path. */
  readonly message: string;
}

/** A filter checked (and typed), or its first problem. */
export type FilterValidation =
  | { readonly ok: true; readonly filter: DestinationFilter }
  | { readonly ok: false; readonly problem: FilterProblem };

/** Thrown inside the walk, caught once by {@link validateFilter}. */
class Refused extends Error {
  constructor(readonly problem: FilterProblem) {
    super(problem.message);
  }
}

const FILTER_KEYS = ['types', 'events', 'eventPrefixes', 'where'];
const FIELD_KEYS = ['field', 'op', 'value'];
/** A path segment: anything but a dot, not empty. */
const SEGMENT = /^[^.]+$/;

/**
 * Checks a filter as the admin API received it (parsed JSON) against the language of
 * docs/api.md, "Destination filters". `root` names it in problem paths.
 */
export function validateFilter(input: unknown, root = 'filter'): FilterValidation {
  try {
    return { ok: true, filter: checkFilter(input, root) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, problem: error.problem };
    throw error;
  }
}

function refuse(path: string, code: FilterProblemCode, what: string): never {
  throw new Refused({ path, code, message: `${path}: ${what}` });
}

function checkFilter(input: unknown, path: string): DestinationFilter {
  const object = objectAt(input, path, FILTER_KEYS);
  const filter: {
    types?: CallType[];
    events?: string[];
    eventPrefixes?: string[];
    where?: FilterPredicate;
  } = {};
  if (object.types !== undefined) {
    filter.types = stringList(object.types, `${path}.types`).map((type, i) => {
      if (!(CALL_TYPES as readonly string[]).includes(type)) {
        refuse(
          `${path}.types[${i}]`,
          'unknown_call_type',
          `not a call type; one of ${CALL_TYPES.join(', ')}`,
        );
      }
      return type as CallType;
    });
  }
  if (object.events !== undefined) filter.events = stringList(object.events, `${path}.events`);
  if (object.eventPrefixes !== undefined) {
    filter.eventPrefixes = stringList(object.eventPrefixes, `${path}.eventPrefixes`);
  }
  if (object.where !== undefined) {
    const budget = { clauses: 0 };
    filter.where = checkPredicate(object.where, `${path}.where`, 1, budget);
  }
  return filter;
}

function objectAt(input: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
  const object = asJsonObject(input);
  if (!object) refuse(path, 'wrong_type', 'must be an object');
  for (const key of Object.keys(object)) {
    if (!keys.includes(key)) {
      refuse(`${path}.${key}`, 'unknown_key', `unknown key; allowed: ${keys.join(', ')}`);
    }
  }
  return object;
}

function stringList(input: unknown, path: string): string[] {
  if (!Array.isArray(input)) refuse(path, 'wrong_type', 'must be a list of strings');
  if (input.length === 0) refuse(path, 'empty_list', 'must not be empty');
  if (input.length > MAX_FILTER_LIST_ITEMS) {
    refuse(path, 'list_too_long', `may hold at most ${MAX_FILTER_LIST_ITEMS} items`);
  }
  return input.map((item, i) => {
    if (typeof item !== 'string' || item === '') {
      refuse(`${path}[${i}]`, 'wrong_type', 'must be a non-empty string');
    }
    return boundedString(item, `${path}[${i}]`);
  });
}

function boundedString(value: string, path: string): string {
  if (value.length > MAX_FILTER_STRING_CHARS) {
    refuse(path, 'string_too_long', `may have at most ${MAX_FILTER_STRING_CHARS} characters`);
  }
  return value;
}

function checkPredicate(
  input: unknown,
  path: string,
  depth: number,
  budget: { clauses: number },
): FilterPredicate {
  if (depth > MAX_FILTER_DEPTH) {
    refuse(path, 'too_deep', `nests deeper than ${MAX_FILTER_DEPTH} levels`);
  }
  const object = asJsonObject(input);
  if (!object) refuse(path, 'wrong_type', 'must be an object: a field clause, and, or, or not');
  const kinds = ['and', 'or', 'not', 'field'].filter((key) => Object.hasOwn(object, key));
  if (kinds.length !== 1) {
    refuse(
      path,
      kinds.length === 0 ? 'missing_key' : 'ambiguous_clause',
      'must have exactly one of and, or, not, field',
    );
  }
  const kind = kinds[0];
  if (kind === 'field') return checkField(object, path, budget);
  objectAt(object, path, [kind]);
  if (kind === 'not') return { not: checkPredicate(object.not, `${path}.not`, depth + 1, budget) };
  const list = object[kind];
  if (!Array.isArray(list)) refuse(`${path}.${kind}`, 'wrong_type', 'must be a list of clauses');
  if (list.length === 0) refuse(`${path}.${kind}`, 'empty_list', 'must not be empty');
  const items = list.map((item, i) =>
    checkPredicate(item, `${path}.${kind}[${i}]`, depth + 1, budget),
  );
  return kind === 'and' ? { and: items } : { or: items };
}

function checkField(
  object: Record<string, unknown>,
  path: string,
  budget: { clauses: number },
): FilterPredicate {
  objectAt(object, path, FIELD_KEYS);
  budget.clauses += 1;
  if (budget.clauses > MAX_FILTER_CLAUSES) {
    refuse(path, 'too_many_clauses', `a filter may hold at most ${MAX_FILTER_CLAUSES} comparisons`);
  }
  const field = object.field;
  if (typeof field !== 'string') refuse(`${path}.field`, 'wrong_type', 'must be a string');
  const segments = field.split('.');
  if (segments.length > MAX_FIELD_PATH_SEGMENTS || !segments.every((s) => SEGMENT.test(s))) {
    refuse(
      `${path}.field`,
      'invalid_field',
      `must be a dot-separated path of at most ${MAX_FIELD_PATH_SEGMENTS} non-empty names, such as properties.total`,
    );
  }
  const op = object.op;
  if (typeof op !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(op)) {
    refuse(`${path}.op`, 'unknown_operator', `must be one of ${FILTER_OPERATORS.join(', ')}`);
  }
  const value = checkValue(op as FilterOperator, object.value, `${path}.value`);
  return value === undefined
    ? { field, op: op as FilterOperator }
    : { field, op: op as FilterOperator, value };
}

/** The value an operator takes; `exists` may leave it out (it means true). */
function checkValue(
  op: FilterOperator,
  value: unknown,
  path: string,
): FilterScalar | FilterScalar[] | undefined {
  switch (op) {
    case 'exists':
      if (value === undefined || typeof value === 'boolean') return value;
      return refuse(path, 'wrong_value_type', 'exists takes true, false or no value');
    case 'eq':
    case 'ne':
      return scalar(value, path, `${op} takes a string, number, boolean or null`);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      if (typeof value === 'string') return boundedString(value, path);
      return refuse(path, 'wrong_value_type', `${op} takes a number or a string`);
    case 'prefix':
    case 'suffix':
      if (typeof value === 'string' && value !== '') return boundedString(value, path);
      return refuse(path, 'wrong_value_type', `${op} takes a non-empty string`);
    case 'in':
      if (!Array.isArray(value)) return refuse(path, 'wrong_value_type', 'in takes a list');
      if (value.length === 0) return refuse(path, 'empty_list', 'must not be empty');
      if (value.length > MAX_FILTER_LIST_ITEMS) {
        return refuse(path, 'list_too_long', `may hold at most ${MAX_FILTER_LIST_ITEMS} items`);
      }
      return value.map((item, i) =>
        scalar(item, `${path}[${i}]`, 'in takes strings, numbers, booleans or null'),
      );
  }
}

function scalar(value: unknown, path: string, what: string): FilterScalar {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') return boundedString(value, path);
  return refuse(path, 'wrong_value_type', what);
}
