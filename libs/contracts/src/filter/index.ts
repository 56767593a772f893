export {
  compileFilter,
  type CompiledFilter,
  eventNameOf,
  filterAccepts,
  type FilterSubject,
} from './filter-compile';
export {
  type DestinationFilter,
  FILTER_OPERATORS,
  type FilterOperator,
  type FilterPredicate,
  type FilterProblem,
  type FilterProblemCode,
  type FilterScalar,
  type FilterValidation,
  MAX_FIELD_PATH_SEGMENTS,
  MAX_FILTER_CLAUSES,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LIST_ITEMS,
  MAX_FILTER_STRING_CHARS,
  validateFilter,
} from './filter-validate';
