import {
  compileFilter,
  type DestinationFilter,
  HEADER,
  integrationVerdicts,
  MAX_EVENT_HEADER_CHARS,
  type RoutedCallType,
  TOPIC,
} from '@app/contracts';
import type { DestinationSettings, SourceSettings } from '@app/settings';

import { decodeCallRecord, RoutedCall } from './call-record';
import { decideRoute, FILTER_REASONS, RoutingSettings } from './route-decision';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';

const source = (overrides: Partial<SourceSettings> = {}): SourceSettings => ({
  id: SOURCE_ID,
  name: 'web',
  enabled: true,
  allowedOrigins: [],
  ...overrides,
});

const destination = (
  id: string,
  overrides: Partial<Omit<DestinationSettings, 'filter'>> & { filter?: DestinationFilter } = {},
): DestinationSettings => ({
  id,
  sourceId: SOURCE_ID,
  kind: 'webhooks',
  name: id,
  enabled: true,
  sharedSecretCiphertext: null,
  webhooks: [{ id: 'w-1', position: 0, url: 'https://example.com/hook', headers: {} }],
  ...overrides,
  filter: overrides.filter ? compileFilter(overrides.filter) : null,
});

/** Settings holding at most one source and its destinations. */
function settings(s?: SourceSettings, ...ds: DestinationSettings[]): RoutingSettings {
  return {
    source: (id) => (s?.id === id ? s : undefined),
    destinationsForSource: (sourceId) => ds.filter((d) => d.sourceId === sourceId),
  };
}

/** A call as the router decodes it from a record: body bytes, type and event headers. */
function call(
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): RoutedCall & { parses: () => number } {
  const type = (body.type as RoutedCallType | undefined) ?? 'track';
  const decoded = decodeCallRecord({
    topic: TOPIC.calls,
    partition: 0,
    offset: '0',
    key: Buffer.from(`${SOURCE_ID}:u`),
    value: Buffer.from(JSON.stringify({ type, ...body })),
    headers: Object.fromEntries(
      Object.entries({
        [HEADER.sourceId]: SOURCE_ID,
        [HEADER.callType]: type,
        ...headers,
      }).map(([k, v]) => [k, Buffer.from(v)]),
    ),
    timestamp: 0,
  });
  if (decoded.kind !== 'call') throw new Error(decoded.reason);
  const routed = new RoutedCall(decoded.call);
  let parses = 0;
  const body0 = routed.body.bind(routed);
  routed.body = () => {
    if (!routed.bodyParsed) parses += 1;
    return body0();
  };
  return Object.assign(routed, { parses: () => parses });
}

const ORDER = { type: 'track', event: 'Order Completed', properties: { total: 120 } };
const orderCall = () => call(ORDER, { [HEADER.event]: 'Order Completed' });
const delivered = (...destinationIds: string[]): unknown =>
  expect.objectContaining({ kind: 'deliver', destinationIds });
const filtered = (reason: string): unknown => expect.objectContaining({ kind: 'filtered', reason });

describe(decideRoute.name, () => {
  it('delivers to every enabled destination of an enabled source, oldest first', () => {
    const current = settings(source(), destination('a'), destination('b'));
    expect(decideRoute(orderCall(), current)).toEqual(delivered('a', 'b'));
  });

  it.each([
    ['an unknown source', settings(undefined, destination('a')), 'source_unknown'],
    [
      'a disabled source',
      settings(source({ enabled: false }), destination('a')),
      'source_disabled',
    ],
    ['a source without destinations', settings(source()), 'no_destination'],
    [
      'disabled destinations',
      settings(source(), destination('a', { enabled: false })),
      'destination_disabled',
    ],
    [
      'a destination without webhooks',
      settings(source(), destination('a', { webhooks: [] })),
      'no_webhooks',
    ],
    [
      'a filter that drops it',
      settings(source(), destination('a', { filter: { types: ['page'] } })),
      'filter',
    ],
    [
      'skips for different reasons',
      settings(
        source(),
        destination('a', { enabled: false }),
        destination('b', { filter: { types: ['page'] } }),
      ),
      'no_match',
    ],
  ])('filters a call of %s', (_name, current, reason) => {
    expect(decideRoute(orderCall(), current)).toEqual(filtered(reason));
  });

  it('lists the destinations it skipped, with their reasons', () => {
    const current = settings(
      source(),
      destination('a', { enabled: false }),
      destination('b', { filter: { events: ['Signed Up'] } }),
      destination('c'),
    );
    expect(decideRoute(orderCall(), current)).toEqual({
      kind: 'deliver',
      destinationIds: ['c'],
      skipped: [
        { destinationId: 'a', reason: 'destination_disabled' },
        { destinationId: 'b', reason: 'filter' },
      ],
    });
  });

  it.each([
    ['Webhooks false: all off', { Webhooks: false }, []],
    ['own name false: that one off', { b: false }, ['a', 'c']],
    ['All false, own name true: only that one', { All: false, c: true }, ['c']],
    ['Webhooks false, own name true: only that one', { Webhooks: false, a: {} }, ['a']],
  ])('follows the integrations object: %s', (_name, integrations, expected) => {
    const header = integrationVerdicts({ integrations });
    const routed = orderCall();
    Object.assign(routed, { integrations: header });
    const current = settings(source(), destination('a'), destination('b'), destination('c'));
    const decision = decideRoute(routed, current);
    expect(decision.kind === 'deliver' ? decision.destinationIds : []).toEqual(expected);
  });

  it.each([
    ['types', { types: ['track'] }, true],
    ['events', { events: ['Order Completed'] }, true],
    ['an event prefix', { eventPrefixes: ['Signed'] }, false],
    ['a where clause', { where: { field: 'properties.total', op: 'gte', value: 100 } }, true],
  ])('applies a filter by %s', (_name, filter, takes) => {
    const current = settings(source(), destination('a', { filter: filter as DestinationFilter }));
    expect(decideRoute(orderCall(), current)).toEqual(takes ? delivered('a') : filtered('filter'));
  });

  it('parses the body only when a filter has a where clause, and once for all of them', () => {
    const byHeaders = orderCall();
    decideRoute(
      byHeaders,
      settings(
        source(),
        destination('a', { filter: { types: ['track'], events: ['Order Completed'] } }),
      ),
    );
    expect(byHeaders.parses()).toBe(0);
    const where = { where: { field: 'properties.total', op: 'gt', value: 1 } } as const;
    const byBody = orderCall();
    const current = settings(
      source(),
      destination('a', { filter: where }),
      destination('b', { filter: where }),
      destination('c', { filter: where }),
    );
    expect(decideRoute(byBody, current)).toEqual(delivered('a', 'b', 'c'));
    expect(byBody.parses()).toBe(1);
  });

  it('reads an event name as long as the header allows from the body', () => {
    const name = 'E'.repeat(MAX_EVENT_HEADER_CHARS + 10);
    const routed = call(
      { type: 'track', event: name },
      { [HEADER.event]: name.slice(0, MAX_EVENT_HEADER_CHARS) },
    );
    const current = settings(source(), destination('a', { filter: { events: [name] } }));
    expect(decideRoute(routed, current)).toEqual(delivered('a'));
    expect(routed.parses()).toBe(1);
  });

  it('delivers a delete notification whatever its integrations and filters say', () => {
    const remove = call(
      { type: 'delete', userId: 'u' },
      { [HEADER.integrations]: '{"Webhooks":false}' },
    );
    const current = settings(source(), destination('a', { filter: { types: ['track'] } }));
    expect(decideRoute(remove, current)).toEqual(delivered('a'));
  });

  it('delivers a delete notification naming its destination there alone', () => {
    const remove = call({ type: 'delete', userId: 'u' }, { [HEADER.destinationId]: 'b' });
    const current = settings(source(), destination('a'), destination('b'), destination('c'));
    expect(decideRoute(remove, current)).toEqual(delivered('b'));
    const gone = call({ type: 'delete', userId: 'u' }, { [HEADER.destinationId]: 'x' });
    expect(decideRoute(gone, current)).toEqual(filtered('no_destination'));
  });

  it('ignores a destination header on any other call', () => {
    const track = call(ORDER, { [HEADER.destinationId]: 'b' });
    const current = settings(source(), destination('a'), destination('b'));
    expect(decideRoute(track, current)).toEqual(delivered('a', 'b'));
  });

  it.each([
    ['source_disabled', settings(source({ enabled: false }), destination('a'))],
    ['destination_disabled', settings(source(), destination('a', { enabled: false }))],
    ['no_destination', settings(source())],
  ])('filters a delete notification like any call: %s', (reason, current) => {
    expect(decideRoute(call({ type: 'delete' }), current)).toEqual(filtered(reason));
  });

  it('reports the settings before the integrations: a disabled destination wins', () => {
    const routed = call(ORDER, { [HEADER.integrations]: '{"Webhooks":false}' });
    expect(decideRoute(routed, settings(source(), destination('a', { enabled: false })))).toEqual(
      filtered('destination_disabled'),
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
      'filter',
      'no_match',
    ]);
  });
});
