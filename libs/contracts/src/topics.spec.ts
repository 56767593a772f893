import { delayLabel, parseDelayLabel, retryTopic } from './topics';

describe('topics', () => {
  it('names retry tiers with the largest whole unit', () => {
    expect(retryTopic(10)).toBe('sluice.deliveries.retry.10s.v1');
    expect(retryTopic(60)).toBe('sluice.deliveries.retry.1m.v1');
    expect(retryTopic(1200)).toBe('sluice.deliveries.retry.20m.v1');
    expect(retryTopic(3600)).toBe('sluice.deliveries.retry.1h.v1');
    expect(retryTopic(90)).toBe('sluice.deliveries.retry.90s.v1');
  });

  it('refuses delays that are not positive whole seconds', () => {
    expect(() => delayLabel(0)).toThrow(RangeError);
    expect(() => delayLabel(1.5)).toThrow(RangeError);
  });

  it('parses delay labels back to seconds', () => {
    expect(parseDelayLabel('10s')).toBe(10);
    expect(parseDelayLabel('5m')).toBe(300);
    expect(parseDelayLabel('1h')).toBe(3600);
    expect(() => parseDelayLabel('10')).toThrow(RangeError);
    expect(() => parseDelayLabel('0s')).toThrow(RangeError);
  });
});
