import { randomUUID } from 'node:crypto';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { TestSource } from '../../helpers/ingest-harness';
import { RouterHarness, TestDestination } from '../../helpers/router-harness';
import { SAMPLE_CALLS } from '../../fixtures/calls';

const h = new RouterHarness();
let source: TestSource;
let destination: TestDestination;

beforeAll(async () => {
  await h.start();
  source = await h.source();
  destination = await h.destination(source.id, {
    urls: ['https://example.com/a', 'https://example.com/b'],
  });
});

afterAll(() => h.close());

/** Headers of a call record as ingest writes them. */
const callHeaders = (sourceId: string, type = 'track') => ({
  [HEADER.sourceId]: sourceId,
  [HEADER.callType]: type,
  [HEADER.messageId]: randomUUID(),
  [HEADER.integrations]: '{"Webhooks":true}',
});

describe('the router', () => {
  it.each(Object.entries(SAMPLE_CALLS))(
    'delivers the %s call once, keyed by destination and user, its bytes unchanged',
    async (type, fields) => {
      const messageId = randomUUID();
      const answer = await h.post(
        `/v1/${type}`,
        { userId: 'user:1', messageId, ...fields },
        { basic: source.writeKey },
      );
      expect(answer.status).toBe(200);
      const call = await h.callRecord(messageId);
      const delivery = await h.delivery(messageId);
      expect(delivery.key?.toString()).toBe(`${destination.id}:user:1`);
      expect(delivery.value?.equals(call.value as Buffer)).toBe(true);
      // The event (a track's `event`, a page's or screen's `name`) rides along for the ledger.
      const { event, name } = fields as { event?: string; name?: string };
      const label = event ?? name;
      expect(delivery.headers).toEqual({
        [HEADER.sourceId]: Buffer.from(source.id),
        [HEADER.callType]: Buffer.from(type),
        [HEADER.messageId]: Buffer.from(messageId),
        [HEADER.destinationId]: Buffer.from(destination.id),
        ...(label === undefined ? {} : { [HEADER.event]: Buffer.from(label) }),
        // Who the call is about rides along too, for the ledger's search by user.
        [HEADER.userId]: Buffer.from('user:1'),
      });
      await h.settled();
      expect(h.deliveriesOf(messageId)).toHaveLength(1);
    },
  );

  it("delivers a batch's calls in order per user", async () => {
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const answer = await h.post(
      '/v1/batch',
      {
        batch: ids.map((messageId) => ({
          type: 'track',
          userId: 'ordered',
          event: 'E',
          messageId,
        })),
      },
      { basic: source.writeKey },
    );
    expect(answer.status).toBe(200);
    const found = await h.deliveries.waitFor(
      TOPIC.deliveries,
      (r) => r.key?.toString() === `${destination.id}:ordered`,
      ids.length,
    );
    expect(found.map((r) => headerText(r, HEADER.messageId))).toEqual(ids);
  });

  it('delivers a delete notification published by the admin app, whatever its integrations', async () => {
    const value = `{"type":"delete","userId":"gone-1","timestamp":"2026-01-02T03:04:05.678Z"}`;
    await h.publishCalls([
      {
        key: `${source.id}:gone-1`,
        value,
        headers: {
          [HEADER.sourceId]: source.id,
          [HEADER.callType]: 'delete',
          [HEADER.integrations]: '{"Webhooks":false}',
        },
      },
    ]);
    const [delivery] = await h.deliveries.waitFor(
      TOPIC.deliveries,
      (r) => r.key?.toString() === `${destination.id}:gone-1`,
    );
    expect(delivery.value?.toString()).toBe(value);
    expect(delivery.headers).toEqual({
      [HEADER.sourceId]: Buffer.from(source.id),
      [HEADER.callType]: Buffer.from('delete'),
      [HEADER.destinationId]: Buffer.from(destination.id),
    });
  });

  it('routes nothing for a source without a destination, or with a disabled one', async () => {
    const bare = await h.source();
    const disabled = await h.source();
    await h.destination(disabled.id, { enabled: false });
    const before = {
      none: await h.routerMetric('sluice_router_calls_filtered_total', {
        reason: 'no_destination',
      }),
      off: await h.routerMetric('sluice_router_calls_filtered_total', {
        reason: 'destination_disabled',
      }),
    };
    const ids = { none: randomUUID(), off: randomUUID() };
    for (const [key, writeKey] of [
      ['none', bare.writeKey],
      ['off', disabled.writeKey],
    ] as const) {
      const body = { userId: 'u', event: 'E', messageId: ids[key] };
      expect((await h.post('/v1/track', body, { basic: writeKey })).status).toBe(200);
    }
    await h.settled();
    expect(h.deliveriesOf(ids.none)).toEqual([]);
    expect(h.deliveriesOf(ids.off)).toEqual([]);
    await expect(
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'no_destination' }),
    ).resolves.toBe(before.none + 1);
    await expect(
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'destination_disabled' }),
    ).resolves.toBe(before.off + 1);
  });

  it('filters a call of a source it does not know', async () => {
    const unknown = randomUUID();
    const headers = callHeaders(unknown);
    await h.publishCalls([{ key: `${unknown}:u`, value: '{"type":"track"}', headers }]);
    await h.settled();
    expect(h.deliveriesOf(headers[HEADER.messageId])).toEqual([]);
    await expect(
      h.routerMetric('sluice_router_calls_filtered_total', { reason: 'source_unknown' }),
    ).resolves.toBeGreaterThanOrEqual(1);
  });

  it('sends records it cannot route to the rejected topic, with the reason, and keeps going', async () => {
    const good = callHeaders(source.id);
    const key = `${source.id}:same-user`;
    const marker = randomUUID();
    const headersWithout = (name: string) => {
      const headers: Record<string, string> = { ...callHeaders(source.id), marker };
      delete headers[name];
      return headers;
    };
    await h.publishCalls([
      { key, value: '{"n":1}', headers: headersWithout(HEADER.sourceId) },
      { key, value: '{"n":2}', headers: headersWithout(HEADER.callType) },
      { key: null, value: '{"n":3}', headers: { ...callHeaders(source.id), marker } },
      { key, value: '', headers: { ...callHeaders(source.id), marker } },
      {
        key,
        value: '{"n":5}',
        headers: { ...callHeaders(source.id), [HEADER.integrations]: 'yes', marker },
      },
      { key, value: '{"n":6}', headers: good },
    ]);
    const rejected = await h.reader.waitFor(
      TOPIC.ingestRejected,
      (r) => headerText(r, 'marker') === marker,
      5,
    );
    expect(rejected.map((r) => headerText(r, HEADER.reason)).sort()).toEqual(
      [
        'missing_source_id',
        'invalid_call_type',
        'missing_key',
        'missing_value',
        'invalid_integrations',
      ].sort(),
    );
    const delivery = await h.delivery(good[HEADER.messageId]);
    expect(delivery.value?.toString()).toBe('{"n":6}');
    await expect(
      h.routerMetric('sluice_router_records_rejected_total', { reason: 'missing_key' }),
    ).resolves.toBe(1);
  });

  it('counts routed calls and produced deliveries', async () => {
    const routed = await h.routerMetric('sluice_router_calls_routed_total', { type: 'track' });
    const produced = await h.routerMetric('sluice_router_deliveries_produced_total', {
      type: 'track',
    });
    expect(routed).toBeGreaterThanOrEqual(21);
    expect(produced).toBe(routed);
  });
});
