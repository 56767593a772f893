import { Decision } from './delivery-decision';
import { batchWarnings } from './delivery-effects';
import { DeliveryFacts } from './delivery-record';

const DESTINATION_ID = 'd-1';

function facts(messageId: string, attempt = 1): DeliveryFacts {
  return {
    deliveryId: undefined,
    destinationId: DESTINATION_ID,
    sourceId: 's-1',
    type: 'track',
    messageId,
    event: undefined,
    userId: undefined,
    anonymousId: undefined,
    replayOf: undefined,
    attempt,
    firstAttemptAt: undefined,
    webhookIds: undefined,
  };
}

function dead(reason: string, attempts = 1): Decision {
  return {
    kind: 'dead',
    dead: { reason, lastStatus: 404, attempts, firstAttemptAt: 1, lastAttemptAt: 2 },
  };
}

const DELIVERED: Decision = { kind: 'delivered', attempts: 1 };
const DISCARDED: Decision = { kind: 'discarded', reason: 'destination_disabled', attempts: 0 };

describe(batchWarnings.name, () => {
  it.each<[string, [string, Decision][], string[]]>([
    [
      'nothing for delivered calls',
      [
        ['m-1', DELIVERED],
        ['m-2', DELIVERED],
      ],
      [],
    ],
    [
      'one line for many calls dead for one reason',
      [
        ['m-1', dead('http_4xx')],
        ['m-2', dead('http_4xx')],
        ['m-3', dead('http_4xx')],
      ],
      [
        '3 call(s) of batch b-1 to destination d-1 (message m-1 first): dead after 1 attempt(s): http_4xx',
      ],
    ],
    [
      'a line per reason and attempt count, skipping the delivered',
      [
        ['m-1', DELIVERED],
        ['m-2', dead('http_4xx')],
        ['m-3', dead('retries_exhausted', 5)],
        ['m-4', dead('http_4xx')],
        ['m-5', DISCARDED],
      ],
      [
        '2 call(s) of batch b-1 to destination d-1 (message m-2 first): dead after 1 attempt(s): http_4xx',
        '1 call(s) of batch b-1 to destination d-1 (message m-3 first): dead after 5 attempt(s): retries_exhausted',
        '1 call(s) of batch b-1 to destination d-1 (message m-5 first): discarded, destination_disabled',
      ],
    ],
  ])('%s', (_, calls, lines) => {
    const decided = calls.map(([messageId, decision]) => ({ facts: facts(messageId), decision }));
    expect(batchWarnings(decided, 'b-1')).toEqual(lines);
  });

  it('names a batch that was never sent by its destination alone', () => {
    const decided = [{ facts: facts('m-1'), decision: DISCARDED }];
    expect(batchWarnings(decided, undefined)).toEqual([
      '1 call(s) of batch to destination d-1 (message m-1 first): discarded, destination_disabled',
    ]);
  });
});
