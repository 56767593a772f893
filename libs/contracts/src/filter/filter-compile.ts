import type { RoutedCallType } from '../calls';
import type {
  DestinationFilter,
  FilterOperator,
  FilterPredicate,
  FilterScalar,
} from './filter-validate';

/** A predicate over a parsed call. */
type CallPredicate = (call: unknown) => boolean;

/**
 * A filter turned into closures once per settings change; deciding a call never reads the
 * filter's JSON again. Each part is absent when the filter does not constrain it, so a caller
 * knows which facts it needs before fetching them (the body is parsed only for `where`).
 */
export interface CompiledFilter {
  /** Call types taken, or undefined: every type. */
  readonly types: ReadonlySet<string> | undefined;
  /** Whether an event name is taken, or undefined: every call, with a name or without. */
  readonly eventName: ((name: string | undefined) => boolean) | undefined;
  /** The predicate over the call's JSON, or undefined: none. */
  readonly where: CallPredicate | undefined;
}

/** What a compiled filter reads of a call; the two functions are called only when needed. */
export interface FilterSubject {
  readonly type: RoutedCallType;
  /** The call's event name (`event`, else `name`), untruncated. */
  eventName(): string | undefined;
  /** The parsed call; the caller parses at most once however many filters ask. */
  body(): unknown;
}

/** Compiles a validated filter (see `validateFilter`). */
export function compileFilter(filter: DestinationFilter): CompiledFilter {
  return Object.freeze({
    types: filter.types ? new Set<string>(filter.types) : undefined,
    eventName: compileEventName(filter.events, filter.eventPrefixes),
    where: filter.where ? compilePredicate(filter.where) : undefined,
  });
}

/** Whether a compiled filter takes a call: every part given matches. */
export function filterAccepts(filter: CompiledFilter, call: FilterSubject): boolean {
  if (filter.types && !filter.types.has(call.type)) return false;
  if (filter.eventName && !filter.eventName(call.eventName())) return false;
  return !filter.where || filter.where(call.body());
}

/**
 * What a call's event name is for filters and the delivery ledger: `event`, else `name`, when
 * a non-empty string.
 */
export function eventNameOf(call: unknown): string | undefined {
  if (call === null || typeof call !== 'object') return undefined;
  const { event, name } = call as { event?: unknown; name?: unknown };
  const value = typeof event === 'string' ? event : name;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function compileEventName(
  events: readonly string[] | undefined,
  prefixes: readonly string[] | undefined,
): ((name: string | undefined) => boolean) | undefined {
  if (!events && !prefixes) return undefined;
  const names = new Set(events ?? []);
  const starts = [...(prefixes ?? [])];
  return (name) => {
    if (name === undefined) return false;
    if (names.has(name)) return true;
    for (const prefix of starts) if (name.startsWith(prefix)) return true;
    return false;
  };
}

function compilePredicate(predicate: FilterPredicate): CallPredicate {
  if ('and' in predicate) {
    const parts = predicate.and.map(compilePredicate);
    return (call) => parts.every((part) => part(call));
  }
  if ('or' in predicate) {
    const parts = predicate.or.map(compilePredicate);
    return (call) => parts.some((part) => part(call));
  }
  if ('not' in predicate) {
    const inner = compilePredicate(predicate.not);
    return (call) => !inner(call);
  }
  const read = fieldReader(predicate.field);
  const test = compileTest(predicate.op, predicate.value);
  return (call) => test(read(call));
}

/**
 * Reads a dot-separated path: own properties of objects, and decimal indexes of arrays;
 * undefined where the path leads nowhere.
 */
function fieldReader(field: string): (call: unknown) => unknown {
  const segments = field.split('.');
  const indexes = segments.map((segment) => (/^\d+$/.test(segment) ? Number(segment) : -1));
  return (call) => {
    let at: unknown = call;
    for (let i = 0; i < segments.length; i += 1) {
      const segment = segments[i];
      if (at === null || typeof at !== 'object') return undefined;
      if (Array.isArray(at)) {
        if (indexes[i] < 0) return undefined;
        at = at[indexes[i]];
      } else {
        if (!Object.hasOwn(at, segment)) return undefined;
        at = (at as Record<string, unknown>)[segment];
      }
    }
    return at;
  };
}

/** The test of one comparison over the value a field holds (undefined when absent). */
function compileTest(
  op: FilterOperator,
  value: FilterScalar | readonly FilterScalar[] | undefined,
): (actual: unknown) => boolean {
  switch (op) {
    case 'eq':
      return (actual) => actual === value;
    case 'ne':
      return (actual) => actual !== value;
    case 'exists': {
      const wanted = value !== false;
      return (actual) => (actual !== undefined && actual !== null) === wanted;
    }
    case 'in': {
      const set = new Set(value as readonly FilterScalar[]);
      return (actual) => set.has(actual as FilterScalar);
    }
    case 'prefix':
      return (actual) => typeof actual === 'string' && actual.startsWith(value as string);
    case 'suffix':
      return (actual) => typeof actual === 'string' && actual.endsWith(value as string);
    default:
      return compareTest(op, value as number | string);
  }
}

/** lt/lte/gt/gte: true only when the field holds the same JSON type as the value. */
function compareTest(
  op: 'lt' | 'lte' | 'gt' | 'gte',
  value: number | string,
): (actual: unknown) => boolean {
  const kind = typeof value;
  switch (op) {
    case 'lt':
      return (actual) => typeof actual === kind && (actual as typeof value) < value;
    case 'lte':
      return (actual) => typeof actual === kind && (actual as typeof value) <= value;
    case 'gt':
      return (actual) => typeof actual === kind && (actual as typeof value) > value;
    case 'gte':
      return (actual) => typeof actual === kind && (actual as typeof value) >= value;
  }
}
