import { CommitNotice, commitNotice, errorType } from './commit-notice';

describe(commitNotice.name, () => {
  const cases: [string, number, number, number | undefined, CommitNotice][] = [
    ['the first refusal of a run', 1, 0, undefined, 'first'],
    ['a first refusal after an earlier run was logged', 1, 90_000, 10_000, 'first'],
    ['a later refusal soon after the last line', 3, 20_000, 5_000, 'quiet'],
    ['a later refusal once the interval passed', 4, 35_000, 5_000, 'still'],
    ['a later refusal never logged (no line yet)', 2, 1_000, undefined, 'first'],
  ];
  it.each(cases)('%s', (_, refusals, now, lastNoticeAt, expected) => {
    expect(commitNotice({ refusals, forMs: 0 }, now, lastNoticeAt, 30_000)).toBe(expected);
  });
});

describe(errorType.name, () => {
  const protocol = Object.assign(new Error('Specified group generation id is not valid'), {
    name: 'KafkaJSProtocolError',
    type: 'ILLEGAL_GENERATION',
  });
  const cases: [string, unknown, string][] = [
    ['a Kafka error code', protocol, 'ILLEGAL_GENERATION'],
    [
      'a retrier’s wrapper of one',
      Object.assign(new Error('retries'), {
        name: 'KafkaJSNumberOfRetriesExceeded',
        originalError: protocol,
      }),
      'ILLEGAL_GENERATION',
    ],
    [
      'a connection error',
      Object.assign(new Error('x'), { name: 'KafkaJSConnectionError' }),
      'KafkaJSConnectionError',
    ],
    ['a string', 'boom', 'string'],
  ];
  it.each(cases)('%s', (_, error, expected) => {
    expect(errorType(error)).toBe(expected);
  });
});
