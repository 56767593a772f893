import { HEADER, TOPIC } from '@app/contracts';

import { traitIdentifyRecord } from './trait-identify';

describe(traitIdentifyRecord.name, () => {
  const record = traitIdentifyRecord(
    { sourceId: 's-1', audienceId: 'a-1', kind: 'audience', key: 'first_time_shopper' },
    'u-1',
    true,
    { receivedAt: Date.parse('2026-11-22T04:00:00.000Z'), newMessageId: () => 'm-1' },
  );

  it('has the body of an identify ingest enriched', () => {
    expect(JSON.parse(record.value as string)).toEqual({
      version: 1,
      type: 'identify',
      messageId: 'm-1',
      timestamp: '2026-11-22T04:00:00.000Z',
      receivedAt: '2026-11-22T04:00:00.000Z',
      userId: 'u-1',
      traits: { first_time_shopper: true },
      context: {
        personas: {
          computation_class: 'audience',
          computation_key: 'first_time_shopper',
          computation_id: 'a-1',
        },
      },
    });
  });

  it('is keyed and headed as ingest does, webhooks allowed', () => {
    expect(record.topic).toBe(TOPIC.calls);
    expect(record.key).toBe('s-1:u-1');
    expect(record.headers).toEqual({
      [HEADER.sourceId]: 's-1',
      [HEADER.callType]: 'identify',
      [HEADER.messageId]: 'm-1',
      [HEADER.integrations]: '{"Webhooks":true}',
      [HEADER.userId]: 'u-1',
    });
  });
});
