import {
  decodeIntegrationsHeader,
  destinationAllowed,
  encodeIntegrationsHeader,
  integrationAllows,
  integrationVerdicts,
  MAX_DESTINATION_NAME_CHARS,
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

/** Whether destinations named `CRM` and `Data` take a call with this integrations object. */
function verdictsFor(integrations: unknown): [boolean, boolean] {
  const verdicts = decodeIntegrationsHeader(
    encodeIntegrationsHeader(integrationVerdicts({ integrations })),
  );
  if (!verdicts) throw new Error('the header did not decode');
  return [destinationAllowed(verdicts, 'CRM'), destinationAllowed(verdicts, 'Data')];
}

describe(integrationVerdicts.name, () => {
  it.each([
    ['no object: all on', undefined, [true, true]],
    ['Webhooks false: all off', { Webhooks: false }, [false, false]],
    ['All false: all off', { All: false }, [false, false]],
    ['own name false: that one off', { CRM: false }, [false, true]],
    ['All false, own name true: only that one', { All: false, CRM: true }, [true, false]],
    ['All false, own name with an object: only that one', { All: false, CRM: {} }, [true, false]],
    ['All false, Webhooks true: all on', { All: false, Webhooks: true }, [true, true]],
    ['Webhooks false, own name true: only that one', { Webhooks: false, CRM: true }, [true, false]],
    ['own name with another value: as absent', { CRM: 'no', All: false }, [false, false]],
    ['names are case-sensitive', { crm: false }, [true, true]],
    ['other destinations named: no effect', { 'Segment.io': {}, Amplitude: false }, [true, true]],
  ])('%s', (_name, integrations, expected) => {
    expect(verdictsFor(integrations)).toEqual(expected);
  });

  it('keeps only verdicts that differ from the kind, so common calls get a constant header', () => {
    const verdicts = integrationVerdicts({ integrations: { 'Segment.io': { apiKey: 'k' } } });
    expect(encodeIntegrationsHeader(verdicts)).toBe('{"Webhooks":true}');
    expect(
      encodeIntegrationsHeader(integrationVerdicts({ integrations: { All: false, CRM: true } })),
    ).toBe('{"Webhooks":false,"CRM":true}');
  });

  it('ignores keys longer than a destination name can be', () => {
    const key = 'k'.repeat(MAX_DESTINATION_NAME_CHARS + 1);
    expect(integrationVerdicts({ integrations: { [key]: false } }).named).toBeUndefined();
  });
});

describe(decodeIntegrationsHeader.name, () => {
  it.each([
    [undefined, true, undefined],
    ['{"Webhooks":true}', true, undefined],
    ['{"Webhooks":false}', false, undefined],
    ['{ "Webhooks" : false }', false, undefined],
    ['{"Other":false}', true, false],
    ['{"Other":false,"Webhooks":true}', true, false],
    ['{"webhooks":false}', true, undefined],
  ])('%s -> Webhooks %s, Other %s', (header, webhooks, other) => {
    const verdicts = decodeIntegrationsHeader(header);
    expect(verdicts?.webhooks).toBe(webhooks);
    expect(verdicts?.named?.get('Other')).toBe(other);
  });

  it.each([['{"Webhooks":"false"}'], ['{"CRM":1}'], ['[]'], ['null'], ['true'], ['not json']])(
    'refuses %s',
    (header) => {
      expect(decodeIntegrationsHeader(header)).toBeUndefined();
    },
  );
});
