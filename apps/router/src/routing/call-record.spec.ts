import { HEADER, TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { CallFacts, decodeCallRecord, deliveryRecord, rejectedRecord } from './call-record';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const VALUE = Buffer.from('{"version":1,"type":"track","userId":"u:1","event":"E"}');

/** A call record as ingest publishes it, with overrides. */
function record(
  headers: Record<string, string | undefined> = {},
  fields: Partial<Pick<IncomingRecord, 'key' | 'value'>> = {},
): IncomingRecord {
  const all: Record<string, string | undefined> = {
    [HEADER.sourceId]: SOURCE_ID,
    [HEADER.callType]: 'track',
    [HEADER.messageId]: 'm-1',
    [HEADER.integrations]: '{"Webhooks":true}',
    ...headers,
  };
  return {
    topic: TOPIC.calls,
    partition: 0,
    offset: '7',
    key: Buffer.from(`${SOURCE_ID}:u:1`),
    value: VALUE,
    headers: Object.fromEntries(
      Object.entries(all).map(([name, text]) => [
        name,
        text === undefined ? text : Buffer.from(text),
      ]),
    ),
    timestamp: 0,
    ...fields,
  };
}

describe(decodeCallRecord.name, () => {
  it('reads the routing facts from the key and headers, keeping the value as is', () => {
    const decoded = decodeCallRecord(record());
    expect(decoded).toEqual({
      kind: 'call',
      call: {
        sourceId: SOURCE_ID,
        userKey: 'u:1',
        type: 'track',
        messageId: 'm-1',
        integrations: { webhooks: true, named: undefined },
        value: VALUE,
      },
    });
    expect(decoded.kind === 'call' && decoded.call.value).toBe(VALUE);
  });

  it('reads a verdict that turns webhooks off', () => {
    const decoded = decodeCallRecord(record({ [HEADER.integrations]: '{"Webhooks":false}' }));
    expect(decoded).toMatchObject({ kind: 'call', call: { integrations: { webhooks: false } } });
  });

  it('reads a delete notification: no message id, no integrations header', () => {
    const decoded = decodeCallRecord(
      record({
        [HEADER.callType]: 'delete',
        [HEADER.messageId]: undefined,
        [HEADER.integrations]: undefined,
      }),
    );
    expect(decoded).toMatchObject({
      kind: 'call',
      call: { type: 'delete', messageId: undefined, integrations: { webhooks: true } },
    });
  });

  it('ignores a malformed integrations header on a delete notification', () => {
    const decoded = decodeCallRecord(
      record({ [HEADER.callType]: 'delete', [HEADER.integrations]: 'nonsense' }),
    );
    expect(decoded).toMatchObject({ kind: 'call', call: { type: 'delete' } });
  });

  it.each([
    ['no source header', record({ [HEADER.sourceId]: undefined }), 'missing_source_id'],
    ['an empty source header', record({ [HEADER.sourceId]: '' }), 'missing_source_id'],
    ['no call type', record({ [HEADER.callType]: undefined }), 'invalid_call_type'],
    ['an unknown call type', record({ [HEADER.callType]: 'Track' }), 'invalid_call_type'],
    ['no key', record({}, { key: null }), 'missing_key'],
    ['an empty key', record({}, { key: Buffer.alloc(0) }), 'missing_key'],
    ['a key of another source', record({}, { key: Buffer.from('other:u-1') }), 'invalid_key'],
    ['a key without a user', record({}, { key: Buffer.from(`${SOURCE_ID}:`) }), 'invalid_key'],
    ['a key that is only the source', record({}, { key: Buffer.from(SOURCE_ID) }), 'invalid_key'],
    ['no value', record({}, { value: null }), 'missing_value'],
    ['an empty value', record({}, { value: Buffer.alloc(0) }), 'missing_value'],
    [
      'a malformed integrations header',
      record({ [HEADER.integrations]: '{' }),
      'invalid_integrations',
    ],
  ])('refuses a record with %s', (_what, input, reason) => {
    expect(decodeCallRecord(input)).toEqual({ kind: 'invalid', reason });
  });
});

describe(deliveryRecord.name, () => {
  const call: CallFacts = {
    sourceId: SOURCE_ID,
    userKey: 'u:1',
    type: 'track',
    messageId: 'm-1',
    integrations: { webhooks: true, named: undefined },
    value: VALUE,
  };

  it('keys by destination and user, passes the bytes on, and carries the routing facts', () => {
    const delivery = deliveryRecord(call, DESTINATION_ID);
    expect(delivery).toEqual({
      topic: TOPIC.deliveries,
      key: `${DESTINATION_ID}:u:1`,
      value: VALUE,
      headers: {
        [HEADER.sourceId]: SOURCE_ID,
        [HEADER.callType]: 'track',
        [HEADER.messageId]: 'm-1',
        [HEADER.destinationId]: DESTINATION_ID,
      },
    });
    expect(delivery.value).toBe(VALUE);
  });

  it("passes the call's user headers on for the ledger", () => {
    const delivery = deliveryRecord({ ...call, userId: 'u:1', anonymousId: 'a-1' }, DESTINATION_ID);
    expect(delivery.headers).toMatchObject({
      [HEADER.userId]: 'u:1',
      [HEADER.anonymousId]: 'a-1',
    });
  });

  it("carries the routing span's trace context when traces are on", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const delivery = deliveryRecord(call, DESTINATION_ID, { [HEADER.traceparent]: traceparent });
    expect(delivery.headers).toMatchObject({
      [HEADER.traceparent]: traceparent,
      [HEADER.destinationId]: DESTINATION_ID,
    });
  });

  it('has no message id header for a delete notification', () => {
    const delivery = deliveryRecord({ ...call, type: 'delete', messageId: undefined }, 'd');
    expect(delivery.headers).not.toHaveProperty(HEADER.messageId);
    expect(delivery.headers).toMatchObject({ [HEADER.callType]: 'delete' });
  });
});

describe(rejectedRecord.name, () => {
  it('keeps the key, value and headers as received and adds the reason', () => {
    const input = record({ [HEADER.sourceId]: undefined });
    expect(rejectedRecord(input, 'missing_source_id')).toEqual({
      topic: TOPIC.ingestRejected,
      key: input.key,
      value: VALUE,
      headers: {
        [HEADER.callType]: Buffer.from('track'),
        [HEADER.messageId]: Buffer.from('m-1'),
        [HEADER.integrations]: Buffer.from('{"Webhooks":true}'),
        [HEADER.reason]: 'missing_source_id',
      },
    });
  });

  it('writes an empty value for a record without one', () => {
    expect(rejectedRecord(record({}, { value: null }), 'missing_value').value).toEqual(
      Buffer.alloc(0),
    );
  });
});
