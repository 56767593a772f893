import { buildCall, CallParams, CallType, serializeCall } from './calls';
import { AnalyticsError } from './errors';
import { LIBRARY } from './library';
import { MAX_CALL_BYTES } from './limits';

const ID = '11111111-1111-4111-8111-111111111111';
const newId = () => ID;
const library = { name: LIBRARY.name, version: LIBRARY.version };

/** The error `build` throws, for assertions on its code and message. */
function thrown(build: () => unknown): AnalyticsError {
  try {
    build();
  } catch (error) {
    if (error instanceof AnalyticsError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe(buildCall.name, () => {
  it.each<[CallType, CallParams[CallType], Record<string, unknown>]>([
    [
      'identify',
      { userId: 'u-1', traits: { plan: 'pro' } },
      { type: 'identify', messageId: ID, userId: 'u-1', traits: { plan: 'pro' } },
    ],
    [
      'track',
      { anonymousId: 'a-1', event: 'Order Completed', properties: { total: 12.5 } },
      {
        type: 'track',
        messageId: ID,
        anonymousId: 'a-1',
        event: 'Order Completed',
        properties: { total: 12.5 },
      },
    ],
    [
      'page',
      { userId: 'u-1', name: 'Pricing', category: 'Docs', properties: { path: '/pricing' } },
      {
        type: 'page',
        messageId: ID,
        userId: 'u-1',
        name: 'Pricing',
        category: 'Docs',
        properties: { path: '/pricing' },
      },
    ],
    [
      'screen',
      { userId: 'u-1', name: 'Home' },
      { type: 'screen', messageId: ID, userId: 'u-1', name: 'Home' },
    ],
    [
      'group',
      { userId: 'u-1', groupId: 'g-1', traits: { seats: 3 } },
      { type: 'group', messageId: ID, userId: 'u-1', groupId: 'g-1', traits: { seats: 3 } },
    ],
    [
      'alias',
      { userId: 'u-1', previousId: 'anon-1' },
      { type: 'alias', messageId: ID, userId: 'u-1', previousId: 'anon-1' },
    ],
  ])('builds the wire form of %s, with context.library and no timestamp', (type, params, wire) => {
    expect(buildCall(type, params, newId)).toEqual({ ...wire, context: { library } });
  });

  it('keeps the caller’s messageId, context, integrations and timestamp', () => {
    const call = buildCall(
      'track',
      {
        userId: 'u-1',
        event: 'E',
        messageId: 'm-1',
        timestamp: new Date('2026-03-01T10:00:00.000Z'),
        context: { ip: '10.0.0.1', library: { name: 'other' } },
        integrations: { All: false, Webhooks: true },
      },
      newId,
    );
    expect(call).toEqual({
      type: 'track',
      messageId: 'm-1',
      userId: 'u-1',
      event: 'E',
      timestamp: '2026-03-01T10:00:00.000Z',
      context: { ip: '10.0.0.1', library },
      integrations: { All: false, Webhooks: true },
    });
    expect(
      buildCall('page', { userId: 'u', timestamp: '2026-03-01T11:00:00+0700' }, newId),
    ).toHaveProperty('timestamp', '2026-03-01T11:00:00+0700');
  });

  it('sends numeric ids as strings, drops null fields, and ignores a type field', () => {
    const params = { userId: 42, groupId: 7, anonymousId: null, type: 'alias' } as unknown;
    expect(buildCall('group', params as CallParams['group'], newId)).toEqual({
      type: 'group',
      messageId: ID,
      userId: '42',
      groupId: '7',
      context: { library },
    });
  });

  it.each<[CallType, Record<string, unknown>, string]>([
    ['identify', { traits: {} }, 'identify: userId or anonymousId is required'],
    ['track', { userId: 'u' }, 'track: event is required'],
    ['track', { event: 'E' }, 'track: userId or anonymousId is required'],
    ['page', { name: 'Home' }, 'page: userId or anonymousId is required'],
    ['screen', { name: 'Home' }, 'screen: userId or anonymousId is required'],
    ['group', { userId: 'u' }, 'group: groupId is required'],
    ['group', { groupId: 'g' }, 'group: userId or anonymousId is required'],
    ['alias', { previousId: 'p' }, 'alias: userId is required'],
    ['alias', { userId: 'u' }, 'alias: previousId is required'],
    ['alias', { userId: 'u', anonymousId: 'a' }, 'alias: previousId is required'],
    [
      'track',
      { userId: '', event: 'E' },
      'track: userId must be a non-empty string or a finite number',
    ],
    ['track', { userId: 'u', event: '' }, 'track: event must be a non-empty string'],
    ['track', { userId: 'u', event: 'E', properties: [] }, 'track: properties must be an object'],
    ['identify', { userId: 'u', traits: 'pro' }, 'identify: traits must be an object'],
    [
      'track',
      { userId: NaN, event: 'E' },
      'track: userId must be a non-empty string or a finite number',
    ],
    [
      'track',
      { userId: 'u', event: 'E', timestamp: new Date('nope') },
      'track: timestamp must be a valid Date or an ISO 8601 string',
    ],
  ])('refuses %s %j', (type, params, message) => {
    const error = thrown(() => buildCall(type, params as never, newId));
    expect(error.code).toBe('invalid_call');
    expect(error.message).toBe(message);
  });

  it('refuses a call that is not an object', () => {
    expect(thrown(() => buildCall('track', null as never, newId)).code).toBe('invalid_call');
  });
});

describe(serializeCall.name, () => {
  const sized = (bytes: number) => {
    const call = buildCall('track', { userId: 'u', event: 'E', properties: { pad: '' } }, newId);
    const padding = bytes - Buffer.byteLength(JSON.stringify(call));
    // 'é' is 2 bytes of UTF-8 and 1 character: the limit is on bytes.
    const pad = 'é'.repeat(Math.floor(padding / 2)) + 'x'.repeat(padding % 2);
    return buildCall('track', { userId: 'u', event: 'E', properties: { pad } }, newId);
  };

  it('serializes once, counting UTF-8 bytes', () => {
    const queued = serializeCall(sized(MAX_CALL_BYTES), 7);
    expect(queued).toMatchObject({ seq: 7, type: 'track', messageId: ID, bytes: MAX_CALL_BYTES });
    expect(JSON.parse(queued.json)).toEqual(sized(MAX_CALL_BYTES));
  });

  it('refuses a call one byte over the limit', () => {
    const error = thrown(() => serializeCall(sized(MAX_CALL_BYTES + 1), 1));
    expect(error.code).toBe('call_too_large');
    expect(error.messageIds).toEqual([ID]);
    expect(error.message).toContain(`${MAX_CALL_BYTES + 1} bytes`);
  });

  it('refuses a call that cannot be serialized', () => {
    const properties: Record<string, unknown> = {};
    properties.self = properties;
    const call = buildCall('track', { userId: 'u', event: 'E', properties }, newId);
    expect(thrown(() => serializeCall(call, 1)).code).toBe('invalid_call');
  });
});
