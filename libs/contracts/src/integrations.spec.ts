import {
  decodeIntegrationsHeader,
  encodeIntegrationsHeader,
  integrationAllows,
  WEBHOOKS_INTEGRATION as W,
} from './integrations';

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

describe(encodeIntegrationsHeader.name, () => {
  it.each([
    [true, '{"Webhooks":true}'],
    [false, '{"Webhooks":false}'],
  ])('writes the verdict %s as %s, which decodes to it again', (webhooks, header) => {
    expect(encodeIntegrationsHeader(webhooks)).toBe(header);
    expect(decodeIntegrationsHeader(encodeIntegrationsHeader(webhooks))).toBe(webhooks);
  });
});

describe(decodeIntegrationsHeader.name, () => {
  it.each([
    [undefined, true],
    ['{"Webhooks":true}', true],
    ['{"Webhooks":false}', false],
    ['{ "Webhooks" : false }', false],
    ['{"Other":false}', true],
    ['{"Other":false,"Webhooks":true}', true],
    ['{"webhooks":false}', true],
    ['{"Webhooks":"false"}', undefined],
    ['[]', undefined],
    ['null', undefined],
    ['true', undefined],
    ['not json', undefined],
  ])('%s -> %s', (header, verdict) => {
    expect(decodeIntegrationsHeader(header)).toBe(verdict);
  });
});
