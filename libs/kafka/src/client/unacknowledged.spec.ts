import { RecordMetadata, TopicMessages } from 'kafkajs';

import { unacknowledgedPartitions } from './unacknowledged';

const answer = (topicName: string, partition: number, errorCode = 0): RecordMetadata => ({
  topicName,
  partition,
  errorCode,
});

describe(unacknowledgedPartitions.name, () => {
  const a = { key: 'a', value: '1' };
  const b = { key: 'b', value: '2' };
  const c = { key: 'c', value: '3', partition: 2 };
  const chosen = new Map<object, number>([
    [a, 0],
    [b, 1],
  ]);
  const sent: TopicMessages[] = [{ topic: 't', messages: [a, b, c] }];

  it.each([
    ['every partition answered', [answer('t', 0), answer('t', 1), answer('t', 2)], []],
    // kafkajs skipped the broker that took over partition 1 during the send.
    ['a partition without an answer', [answer('t', 0), answer('t', 2)], ['t:1']],
    ['an answer with an error code', [answer('t', 0), answer('t', 1), answer('t', 2, 6)], ['t:2']],
    ['another topic answered instead', [answer('u', 0), answer('t', 1), answer('t', 2)], ['t:0']],
  ])('%s', (_, answers, missing) => {
    expect(unacknowledgedPartitions(sent, answers, chosen)).toEqual(missing);
  });

  it('does not check a record whose partition is unknown', () => {
    const unknown = { key: 'x', value: '4' };
    expect(unacknowledgedPartitions([{ topic: 't', messages: [unknown] }], [], chosen)).toEqual([]);
  });
});
