import { validateSync } from 'class-validator';

import { CALL_TYPES, CallType } from './calls';
import { CALL_CLASSES, stringifyIds, validateCall } from './validate-call';

describe(validateCall.name, () => {
  it('accepts a minimal call of each type', () => {
    expect(validateCall('track', { userId: 'u', event: 'E' })).toBeUndefined();
    expect(validateCall('page', { anonymousId: 'a' })).toBeUndefined();
    expect(validateCall('screen', { userId: 'u', name: 'Home' })).toBeUndefined();
    expect(validateCall('identify', { userId: 'u', traits: { plan: 'pro' } })).toBeUndefined();
    expect(validateCall('group', { userId: 'u', groupId: 'g' })).toBeUndefined();
    expect(validateCall('alias', { userId: 'new', previousId: 'old' })).toBeUndefined();
  });

  it('requires userId or anonymousId', () => {
    expect(validateCall('track', { event: 'E' })).toMatch(/userId or anonymousId is required/);
  });

  it('takes an empty userId beside an anonymousId as none, and refuses two empty ids', () => {
    // analytics-kotlin sends "userId": "" until the user is identified.
    expect(validateCall('track', { userId: '', anonymousId: 'a', event: 'E' })).toBeUndefined();
    expect(validateCall('track', { userId: '', anonymousId: '', event: 'E' })).toBe(
      'userId should not be empty (isNotEmpty)',
    );
    expect(validateCall('identify', { userId: '' })).toBe(
      'userId should not be empty (isNotEmpty)',
    );
    expect(validateCall('page', { userId: 'u', anonymousId: '' })).toBeUndefined();
  });

  it('names the field and the rule', () => {
    expect(validateCall('track', { userId: 'u', event: '' })).toBe(
      'event should not be empty (isNotEmpty)',
    );
    expect(validateCall('track', { userId: 'u', event: 'E', properties: [] })).toBe(
      'properties must be an object (isObject)',
    );
    expect(validateCall('group', { userId: 'u' })).toMatch(/^groupId /);
  });

  it('requires both ids of an alias, whatever else is given', () => {
    expect(validateCall('alias', { anonymousId: 'a', previousId: 'old' })).toMatch(/^userId/);
    expect(validateCall('alias', { userId: 'new' })).toMatch(/^previousId/);
  });

  it('accepts ISO 8601 times with offsets written with or without a colon', () => {
    for (const timestamp of [
      '2026-01-02T03:04:05Z',
      '2026-01-02T03:04:05.123+07:00',
      '2026-01-02T03:04:05+0700',
    ]) {
      expect(validateCall('track', { userId: 'u', event: 'E', timestamp })).toBeUndefined();
    }
  });

  it('refuses times that are not ISO 8601 date-times with a zone', () => {
    for (const sentAt of ['yesterday', '2026-01-02', '2026-01-02T03:04:05', 1767225600000]) {
      expect(validateCall('track', { userId: 'u', event: 'E', sentAt })).toMatch(
        /^sentAt .*isDateTime/,
      );
    }
  });

  it('is not fooled by an own __proto__ field', () => {
    const call = JSON.parse('{"__proto__": {"event": "E"}, "userId": "u", "event": ""}') as Record<
      string,
      unknown
    >;
    expect(validateCall('track', call)).toBe('event should not be empty (isNotEmpty)');
  });
});

describe(stringifyIds.name, () => {
  it('turns numeric ids into strings and leaves the rest', () => {
    const call: Record<string, unknown> = { userId: 42, anonymousId: 'a', groupId: 7.5, event: 3 };
    stringifyIds(call);
    expect(call).toEqual({ userId: '42', anonymousId: 'a', groupId: '7.5', event: 3 });
  });
});

/** What class-validator itself says: the reference the compiled checker must match. */
function reference(type: CallType, call: Record<string, unknown>): string | undefined {
  const errors = validateSync(Object.assign(new CALL_CLASSES[type](), call), {
    stopAtFirstError: true,
    forbidUnknownValues: false,
  });
  if (errors.length === 0) return undefined;
  const [rule, message] = Object.entries(errors[0].constraints ?? {})[0];
  return `${message} (${rule})`;
}

describe('the compiled checker', () => {
  const VALUES: unknown[] = [
    undefined,
    null,
    '',
    'x',
    0,
    7,
    true,
    [],
    {},
    { a: 1 },
    '2026-01-02T03:04:05Z',
    '2026-01-02',
  ];
  const FIELDS = [
    'userId',
    'anonymousId',
    'previousId',
    'groupId',
    'event',
    'name',
    'properties',
    'traits',
    'context',
    'integrations',
    'timestamp',
    'sentAt',
    'messageId',
  ];

  it('agrees with class-validator on many calls of every type', () => {
    // A deterministic walk over field/value combinations, two fields at a time.
    let compared = 0;
    for (const type of CALL_TYPES) {
      for (let i = 0; i < FIELDS.length; i += 1) {
        for (let j = i; j < FIELDS.length; j += 1) {
          for (let v = 0; v < VALUES.length; v += 1) {
            const base: Record<string, unknown> = {
              userId: 'u',
              event: 'E',
              groupId: 'g',
              previousId: 'p',
            };
            const call = {
              ...base,
              [FIELDS[i]]: VALUES[v],
              [FIELDS[j]]: VALUES[(v * 5 + j) % VALUES.length],
            };
            for (const key of Object.keys(call)) if (call[key] === undefined) delete call[key];
            expect([type, call, validateCall(type, call)]).toEqual([
              type,
              call,
              reference(type, call),
            ]);
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(5_000);
  });
});
