import { BadRequestException, ConflictException } from '@nestjs/common';

import {
  type DestinationFilter,
  MAX_DESTINATIONS_PER_SOURCE,
  validateFilter,
} from '@app/contracts';

import { conflict, PG_CHECK_VIOLATION, PG_UNIQUE_VIOLATION, sqlState } from '../admin.errors';

/**
 * A filter from a request checked against the filter language: undefined when absent (left
 * as it is), null to clear, the checked filter otherwise; a bad one is a 400 naming the path
 * of the bad part, its rule and nothing else of the body.
 */
export function checkedFilter(input: unknown): DestinationFilter | null | undefined {
  if (input === undefined || input === null) return input;
  const checked = validateFilter(input);
  if (checked.ok) return checked.filter;
  const { path, code, message } = checked.problem;
  throw new BadRequestException({ code: 'invalid_filter', message, path, rule: code });
}

/** 409: the source has MAX_DESTINATIONS_PER_SOURCE destinations. */
export function tooManyDestinations(): ConflictException {
  return conflict(
    'too_many_destinations',
    `a source has at most ${MAX_DESTINATIONS_PER_SOURCE} destinations`,
  );
}

/** 409: another destination of the source has this name. */
export function nameTaken(name: string): ConflictException {
  return conflict(
    'destination_name_taken',
    `the source already has a destination named ${JSON.stringify(name.slice(0, 200))}`,
  );
}

/**
 * The answer to a constraint the database enforced where the API's own check lost a race:
 * a 21st destination or a duplicate name; undefined for any other error.
 */
export function destinationConflict(
  error: unknown,
  name: string | undefined,
): ConflictException | undefined {
  const state = sqlState(error);
  const constraint = (error as { driverError?: { constraint?: unknown } }).driverError?.constraint;
  if (state === PG_UNIQUE_VIOLATION && constraint === 'destination_source_name_unique') {
    return nameTaken(name ?? '');
  }
  if (
    (state === PG_UNIQUE_VIOLATION && constraint === 'destination_source_slot_unique') ||
    (state === PG_CHECK_VIOLATION && constraint === 'destination_slot_range_check')
  ) {
    return tooManyDestinations();
  }
  return undefined;
}
