import { stringifyIds, validateCall } from './validate-call';

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

  it('refuses an own __proto__ field instead of letting it replace the rules', () => {
    const call = JSON.parse('{"__proto__": {"x": 1}, "event": ""}') as Record<string, unknown>;
    expect(validateCall('track', call)).toMatch(/__proto__/);
  });
});

describe(stringifyIds.name, () => {
  it('turns numeric ids into strings and leaves the rest', () => {
    const call: Record<string, unknown> = { userId: 42, anonymousId: 'a', groupId: 7.5, event: 3 };
    stringifyIds(call);
    expect(call).toEqual({ userId: '42', anonymousId: 'a', groupId: '7.5', event: 3 });
  });
});
