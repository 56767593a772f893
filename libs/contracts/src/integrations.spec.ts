import { integrationAllows, WEBHOOKS_INTEGRATION as W } from './integrations';

describe(integrationAllows.name, () => {
  it.each([
    ['no integrations object', {}, true],
    ['All false', { integrations: { All: false } }, false],
    ['All false, named true', { integrations: { All: false, Webhooks: true } }, true],
    ['All false, named with an object', { integrations: { All: false, Webhooks: {} } }, true],
    ['named false', { integrations: { Webhooks: false } }, false],
    ['All true, named false', { integrations: { All: true, Webhooks: false } }, false],
    ['other value ignored', { integrations: { Webhooks: 'no' } }, true],
    ['other value ignored under All false', { integrations: { All: false, Webhooks: 1 } }, false],
    ['names are case-sensitive', { integrations: { webhooks: false } }, true],
    [
      'falls back to context.integrations',
      { context: { integrations: { Webhooks: false } } },
      false,
    ],
    [
      'top level wins over context',
      { integrations: { Webhooks: true }, context: { integrations: { Webhooks: false } } },
      true,
    ],
  ])('%s', (_name, call, expected) => {
    expect(integrationAllows(call, W)).toBe(expected);
  });
});
