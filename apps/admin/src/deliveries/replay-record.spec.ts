import { deliveryIdFor, HEADER, TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { deadLetterDeliveryId, replayRecord } from './replay-record';

const DESTINATION = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';
const NEW_ID = '11111111-2222-4333-8444-555555555555';
const ORIGINAL = '99999999-8888-4777-8666-555555555555';

function dead(headers: Record<string, string>): IncomingRecord {
  return {
    topic: TOPIC.deliveriesDead,
    partition: 2,
    offset: '41',
    key: Buffer.from(`${DESTINATION}:user-1`),
    value: Buffer.from('{"type":"track","messageId":"m-1"}'),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
    timestamp: 0,
  };
}

const DEAD_HEADERS = {
  [HEADER.sourceId]: 'src-1',
  [HEADER.callType]: 'track',
  [HEADER.messageId]: 'm-1',
  [HEADER.destinationId]: DESTINATION,
  [HEADER.event]: 'Order Completed',
  [HEADER.reason]: 'http_4xx',
  [HEADER.attempt]: '3',
  [HEADER.firstAttemptAt]: '1795600000000',
  [HEADER.lastAttemptAt]: '1795600060000',
  [HEADER.lastStatus]: '400',
  [HEADER.webhookIds]: 'w-1,w-2',
  [HEADER.dueAt]: '1795600090000',
};

describe(replayRecord.name, () => {
  const replay = replayRecord(dead(DEAD_HEADERS), NEW_ID, ORIGINAL);
  const text = (name: string) => replay.headers?.[name]?.toString();

  it('goes to the deliveries topic with the same key and bytes', () => {
    expect(replay.topic).toBe(TOPIC.deliveries);
    expect(replay.key?.toString()).toBe(`${DESTINATION}:user-1`);
    expect(replay.value.toString()).toBe('{"type":"track","messageId":"m-1"}');
  });

  it.each([
    [HEADER.sourceId, 'src-1'],
    [HEADER.callType, 'track'],
    [HEADER.messageId, 'm-1'],
    [HEADER.destinationId, DESTINATION],
    [HEADER.event, 'Order Completed'],
    [HEADER.deliveryId, NEW_ID],
    [HEADER.replayOf, ORIGINAL],
  ])('carries %s', (name, value) => {
    expect(text(name)).toBe(value);
  });

  it('drops what would continue the old retry window', () => {
    expect(Object.keys(replay.headers ?? {}).sort()).toEqual(
      [
        HEADER.sourceId,
        HEADER.callType,
        HEADER.messageId,
        HEADER.destinationId,
        HEADER.event,
        HEADER.deliveryId,
        HEADER.replayOf,
      ].sort(),
    );
  });

  it('replaces the delivery id of a dead replay', () => {
    const again = replayRecord(
      dead({ ...DEAD_HEADERS, [HEADER.deliveryId]: ORIGINAL }),
      NEW_ID,
      ORIGINAL,
    );
    expect(again.headers?.[HEADER.deliveryId]?.toString()).toBe(NEW_ID);
  });
});

describe(deadLetterDeliveryId.name, () => {
  it.each([
    ['its delivery id header', { ...DEAD_HEADERS, [HEADER.deliveryId]: ORIGINAL }, ORIGINAL],
    ['derived from destination and message', DEAD_HEADERS, deliveryIdFor(DESTINATION, 'm-1')],
    ['unknowable without a message id', { [HEADER.destinationId]: DESTINATION }, undefined],
  ])('%s', (_label, headers, expected) => {
    expect(deadLetterDeliveryId(dead(headers))).toBe(expected);
  });
});
