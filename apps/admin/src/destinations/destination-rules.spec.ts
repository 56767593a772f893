import { BadRequestException } from '@nestjs/common';

import { checkedFilter, destinationConflict } from './destination-rules';

/** An error as TypeORM wraps a PostgreSQL one. */
const pgError = (code: string, constraint: string) => ({ driverError: { code, constraint } });

describe(destinationConflict.name, () => {
  it.each([
    [
      'a duplicate name',
      pgError('23505', 'destination_source_name_unique'),
      'destination_name_taken',
    ],
    [
      'a slot taken meanwhile',
      pgError('23505', 'destination_source_slot_unique'),
      'too_many_destinations',
    ],
    ['no slot left', pgError('23514', 'destination_slot_range_check'), 'too_many_destinations'],
    [
      'another unique constraint',
      pgError('23505', 'webhook_destination_position_unique'),
      undefined,
    ],
    ['another check', pgError('23514', 'destination_name_not_empty_check'), undefined],
    ['not a database error', new Error('boom'), undefined],
  ])('maps %s', (_name, error, code) => {
    const answer = destinationConflict(error, 'CRM');
    expect(answer === undefined ? undefined : (answer.getResponse() as { code: string }).code).toBe(
      code,
    );
    if (answer) expect(answer.getStatus()).toBe(409);
  });
});

describe(checkedFilter.name, () => {
  it.each([
    ['absent', undefined, undefined],
    ['null', null, null],
    ['a valid filter', { types: ['track'] }, { types: ['track'] }],
  ])('passes %s through', (_name, input, expected) => {
    expect(checkedFilter(input)).toEqual(expected);
  });

  it('answers a bad filter with 400 invalid_filter, its path and rule', () => {
    let thrown: unknown;
    try {
      checkedFilter({ where: { field: 'a', op: 'like', value: 'x' } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestException);
    expect((thrown as BadRequestException).getResponse()).toEqual({
      code: 'invalid_filter',
      path: 'filter.where.op',
      rule: 'unknown_operator',
      message: expect.stringMatching(/^filter\.where\.op: must be one of eq, /),
    });
  });
});
