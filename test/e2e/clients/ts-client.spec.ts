import { Analytics, AnalyticsError, LIBRARY } from '@app/client';
import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { IngestHarness, TestSource } from '../../helpers/ingest-harness';
import { json } from '../../helpers/topic-reader';

/** Calls sent beside one of each type: enough for many batches and requests in flight. */
const TRACK_CALLS = 400;

const h = new IngestHarness();
let source: TestSource;

beforeAll(async () => {
  await h.start();
  source = await h.source();
});

afterAll(() => h.close());

describe('the TypeScript client against ingest', () => {
  it('delivers every call type and hundreds of tracks to sluice.calls.v1, nothing lost across close()', async () => {
    const errors: AnalyticsError[] = [];
    const analytics = new Analytics({
      writeKey: source.writeKey,
      endpoint: h.url,
      flushAt: 25,
      flushAfterMs: 60_000,
      onError: (error) => errors.push(error),
    });
    const context = { library: { name: LIBRARY.name, version: LIBRARY.version } };
    const expected = new Map<string, Record<string, unknown>>();
    const sent = (id: string, fields: Record<string, unknown>) => expected.set(id, fields);

    // Sign-up: the anonymous visitor becomes user e2e-u1.
    sent(analytics.page({ anonymousId: 'e2e-a1', name: 'Pricing', properties: { path: '/p' } }), {
      type: 'page',
      anonymousId: 'e2e-a1',
      name: 'Pricing',
      properties: { path: '/p' },
    });
    sent(analytics.alias({ userId: 'e2e-u1', previousId: 'e2e-a1' }), {
      type: 'alias',
      userId: 'e2e-u1',
      previousId: 'e2e-a1',
    });
    sent(analytics.identify({ userId: 'e2e-u1', traits: { plan: 'pro' } }), {
      type: 'identify',
      userId: 'e2e-u1',
      traits: { plan: 'pro' },
    });
    sent(analytics.group({ userId: 'e2e-u1', groupId: 'e2e-g1', traits: { seats: 3 } }), {
      type: 'group',
      userId: 'e2e-u1',
      groupId: 'e2e-g1',
      traits: { seats: 3 },
    });
    sent(analytics.screen({ userId: 'e2e-u1', name: 'Home' }), {
      type: 'screen',
      userId: 'e2e-u1',
      name: 'Home',
    });
    for (let i = 0; i < TRACK_CALLS; i++) {
      const fields = {
        userId: `e2e-u${i % 13}`,
        event: 'Order Completed',
        properties: { n: i, total: 12.5 },
      };
      sent(analytics.track(fields), { type: 'track', ...fields });
    }
    // 405 calls at 25 a request: the last 5 leave only because close() drains them.
    expect(analytics.queuedCalls).toBeGreaterThan(0);
    await analytics.close();
    expect(errors).toEqual([]);

    const records = await h.reader.waitFor(
      TOPIC.calls,
      (r) => headerText(r, HEADER.sourceId) === source.id,
      expected.size,
    );
    const byId = new Map(records.map((r) => [headerText(r, HEADER.messageId), json(r)]));
    expect(new Set(byId.keys())).toEqual(new Set(expected.keys()));
    for (const [messageId, fields] of expected) {
      const call = byId.get(messageId);
      expect(call).toMatchObject({ ...fields, messageId, version: 1 });
      expect(call?.context).toEqual({ ...context, ip: '127.0.0.1' });
      // The client sent no timestamp: the server's time of receipt is used.
      expect(call?.timestamp).toBe(call?.receivedAt);
    }
  });

  it('reports a call ingest rejects, and delivers the rest of its batch', async () => {
    const errors: AnalyticsError[] = [];
    const analytics = new Analytics({
      writeKey: source.writeKey,
      endpoint: h.url,
      onError: (error) => errors.push(error),
    });
    const good = analytics.track({ userId: 'e2e-r', event: 'Kept' });
    const bad = analytics.track({ userId: 'e2e-r', event: 'Refused', timestamp: 'not a time' });
    await analytics.close();
    expect(errors).toEqual([expect.objectContaining({ code: 'call_rejected', messageIds: [bad] })]);
    await h.reader.waitFor(TOPIC.calls, (r) => headerText(r, HEADER.messageId) === good);
  });

  it('reports a write key ingest does not know, without retrying', async () => {
    const errors: AnalyticsError[] = [];
    const analytics = new Analytics({
      writeKey: 'not-a-known-write-key',
      endpoint: h.url,
      onError: (error) => errors.push(error),
    });
    const id = analytics.identify({ userId: 'e2e-x' });
    await analytics.close();
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'request_refused',
        status: 401,
        serverCode: 'unauthorized',
        messageIds: [id],
      }),
    ]);
  });
});
