import type { DestinationSettings, SourceSettings } from '@app/settings';

import { decideRoute, FILTER_REASONS, RoutingSettings } from './route-decision';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';

const source = (overrides: Partial<SourceSettings> = {}): SourceSettings => ({
  id: SOURCE_ID,
  name: 'web',
  enabled: true,
  allowedOrigins: [],
  ...overrides,
});

const destination = (overrides: Partial<DestinationSettings> = {}): DestinationSettings => ({
  id: DESTINATION_ID,
  sourceId: SOURCE_ID,
  kind: 'webhooks',
  name: 'hooks',
  enabled: true,
  sharedSecretCiphertext: null,
  webhooks: [{ id: 'w-1', position: 0, url: 'https://example.com/hook', headers: {} }],
  ...overrides,
});

/** Settings holding at most one source and its destination. */
function settings(s?: SourceSettings, d?: DestinationSettings): RoutingSettings {
  return {
    source: (id) => (s?.id === id ? s : undefined),
    destinationForSource: (sourceId) => (d?.sourceId === sourceId ? d : undefined),
  };
}

const track = { sourceId: SOURCE_ID, type: 'track', webhooks: true } as const;
const deliver = { kind: 'deliver', destinationId: DESTINATION_ID };
const filtered = (reason: string) => ({ kind: 'filtered', reason });

describe(decideRoute.name, () => {
  it('delivers to the enabled destination of an enabled source', () => {
    expect(decideRoute(track, settings(source(), destination()))).toEqual(deliver);
  });

  it.each(['track', 'page', 'screen', 'identify', 'group', 'alias'] as const)(
    'delivers a %s call the integrations allow',
    (type) => {
      expect(decideRoute({ ...track, type }, settings(source(), destination()))).toEqual(deliver);
    },
  );

  it('filters a call of an unknown source', () => {
    expect(decideRoute(track, settings(undefined, destination()))).toEqual(
      filtered('source_unknown'),
    );
  });

  it('filters a call of a disabled source', () => {
    expect(decideRoute(track, settings(source({ enabled: false }), destination()))).toEqual(
      filtered('source_disabled'),
    );
  });

  it('filters a call of a source without a destination', () => {
    expect(decideRoute(track, settings(source()))).toEqual(filtered('no_destination'));
  });

  it('filters a call whose destination is disabled', () => {
    expect(decideRoute(track, settings(source(), destination({ enabled: false })))).toEqual(
      filtered('destination_disabled'),
    );
  });

  it('filters a call whose enabled destination has no webhook', () => {
    expect(decideRoute(track, settings(source(), destination({ webhooks: [] })))).toEqual(
      filtered('no_webhooks'),
    );
  });

  it('filters a call whose integrations verdict turns webhooks off', () => {
    expect(decideRoute({ ...track, webhooks: false }, settings(source(), destination()))).toEqual(
      filtered('integrations'),
    );
  });

  it('delivers a delete notification whatever its integrations verdict', () => {
    const remove = { sourceId: SOURCE_ID, type: 'delete', webhooks: false } as const;
    expect(decideRoute(remove, settings(source(), destination()))).toEqual(deliver);
  });

  it.each([
    ['source_disabled', settings(source({ enabled: false }), destination())],
    ['destination_disabled', settings(source(), destination({ enabled: false }))],
    ['no_destination', settings(source())],
  ])('filters a delete notification like any call: %s', (reason, current) => {
    const remove = { sourceId: SOURCE_ID, type: 'delete', webhooks: true } as const;
    expect(decideRoute(remove, current)).toEqual(filtered(reason));
  });

  it('reports the settings before the integrations: a disabled destination wins', () => {
    const current = settings(source(), destination({ enabled: false }));
    expect(decideRoute({ ...track, webhooks: false }, current)).toEqual(
      filtered('destination_disabled'),
    );
  });

  it('uses the settings of the source the call names, not another one', () => {
    const other = source({ id: '33333333-3333-4333-8333-333333333333' });
    expect(decideRoute(track, settings(other, destination({ sourceId: other.id })))).toEqual(
      filtered('source_unknown'),
    );
  });

  it('has a reason for every filter, each a metric label', () => {
    expect(FILTER_REASONS).toEqual([
      'source_unknown',
      'source_disabled',
      'no_destination',
      'destination_disabled',
      'no_webhooks',
      'integrations',
    ]);
  });
});
