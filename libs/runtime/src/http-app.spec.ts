import { startupFailureLine } from './http-app';

describe(startupFailureLine.name, () => {
  it('carries the fields of every other log line and the error message, no stack', () => {
    const error = new Error('Kafka TLS: the broker did not answer in TLS (KAFKA_SSL)');
    const line = startupFailureLine('router', error, 4242, 1_790_000_000_000);
    expect(JSON.parse(line)).toEqual({
      app: 'router',
      level: 'fatal',
      pid: 4242,
      timestamp: 1_790_000_000_000,
      message: 'start-up failed: Kafka TLS: the broker did not answer in TLS (KAFKA_SSL)',
    });
    expect(line).not.toContain('at ');
  });

  it('takes a thrown value that is not an Error', () => {
    expect(JSON.parse(startupFailureLine('admin', 'no', 1, 2))).toMatchObject({
      message: 'start-up failed: no',
    });
  });
});
