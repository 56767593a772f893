import { enrichCall, EnrichContext } from './enrich';

const RECEIVED = Date.parse('2026-11-22T10:00:00.000Z');
const ctx: EnrichContext = {
  receivedAt: RECEIVED,
  ip: '198.51.100.7',
  newMessageId: () => 'generated-id',
};

describe(enrichCall.name, () => {
  it('fills type, messageId, receivedAt, timestamp, context and ip; removes writeKey', () => {
    const call = enrichCall(
      'track',
      { userId: 'u', event: 'E', writeKey: 'secret', type: 'page' },
      ctx,
    );
    expect(call).toEqual({
      userId: 'u',
      event: 'E',
      version: 1,
      properties: {},
      type: 'track',
      messageId: 'generated-id',
      receivedAt: '2026-11-22T10:00:00.000Z',
      timestamp: '2026-11-22T10:00:00.000Z',
      context: { ip: '198.51.100.7' },
    });
  });

  it('keeps a messageId, a context ip and a timestamp without sentAt as sent', () => {
    const call = enrichCall(
      'identify',
      {
        userId: 'u',
        messageId: 'm',
        timestamp: '2025-01-01T00:00:00+0100',
        context: { ip: '192.0.2.1' },
      },
      ctx,
    );
    expect(call).toMatchObject({
      messageId: 'm',
      timestamp: '2025-01-01T00:00:00+0100',
      context: { ip: '192.0.2.1' },
    });
    expect(call).not.toHaveProperty('originalTimestamp');
  });

  it('corrects the clock skew between timestamp and sentAt', () => {
    const call = enrichCall(
      'track',
      {
        userId: 'u',
        event: 'E',
        timestamp: '2026-11-22T12:59:30+0300',
        sentAt: '2026-11-22T10:00:00Z',
      },
      ctx,
    );
    // The event happened 30 s before sending (09:59:30Z against 10:00:00Z): 30 s before receipt.
    expect(call.timestamp).toBe('2026-11-22T09:59:30.000Z');
    expect(call.originalTimestamp).toBe('2026-11-22T12:59:30+0300');
  });

  it("corrects the skew with the batch's sentAt when the call has none, and keeps it", () => {
    const batchCtx = { ...ctx, batchSentAt: '2026-11-22T08:00:00Z' };
    const call = enrichCall(
      'track',
      { userId: 'u', event: 'E', timestamp: '2026-11-22T07:59:00Z' },
      batchCtx,
    );
    expect(call).toMatchObject({
      timestamp: '2026-11-22T09:59:00.000Z',
      originalTimestamp: '2026-11-22T07:59:00Z',
      sentAt: '2026-11-22T08:00:00Z',
    });
    const own = enrichCall(
      'track',
      {
        userId: 'u',
        event: 'E',
        timestamp: '2026-11-22T07:59:00Z',
        sentAt: '2026-11-22T07:59:30Z',
      },
      batchCtx,
    );
    expect(own).toMatchObject({
      timestamp: '2026-11-22T09:59:30.000Z',
      sentAt: '2026-11-22T07:59:30Z',
    });
    // Without a timestamp of its own, the call is dated by the server's clock, as before.
    expect(enrichCall('page', { userId: 'u' }, batchCtx).timestamp).toBe(
      '2026-11-22T10:00:00.000Z',
    );
  });

  it("merges a batch's context and integrations under the call's own", () => {
    const call = enrichCall(
      'track',
      { userId: 'u', event: 'E', context: { locale: 'fr' }, integrations: { Webhooks: false } },
      {
        ...ctx,
        batchContext: { locale: 'de', app: { name: 'a' } },
        batchIntegrations: { All: false, Webhooks: true },
      },
    );
    expect(call.context).toEqual({ locale: 'fr', app: { name: 'a' }, ip: '198.51.100.7' });
    expect(call.integrations).toEqual({ All: false, Webhooks: false });
  });

  it('leaves context.ip out when the address is unknown (Kafka ingress)', () => {
    const call = enrichCall('page', { anonymousId: 'a' }, { ...ctx, ip: undefined });
    expect(call.context).toEqual({});
  });

  it('sets version 1 over a sent one and gives each type its objects', () => {
    expect(enrichCall('identify', { userId: 'u', version: 2 }, ctx)).toMatchObject({
      version: 1,
      traits: {},
    });
    expect(enrichCall('group', { userId: 'u', groupId: 'g' }, ctx)).toMatchObject({ traits: {} });
    expect(enrichCall('alias', { userId: 'u', previousId: 'p' }, ctx)).not.toHaveProperty('traits');
  });

  it('fills page properties from context.page where absent', () => {
    const call = enrichCall(
      'page',
      {
        userId: 'u',
        properties: { title: 'Own title' },
        context: {
          page: {
            path: '/p',
            referrer: 'https://r.example',
            title: 'Page title',
            url: 'https://x.example/p',
            search: '?q',
          },
        },
      },
      ctx,
    );
    expect(call.properties).toEqual({
      title: 'Own title',
      path: '/p',
      referrer: 'https://r.example',
      url: 'https://x.example/p',
    });
    expect(enrichCall('page', { userId: 'u' }, ctx).properties).toEqual({});
  });
});
