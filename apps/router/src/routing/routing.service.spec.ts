import { compileFilter, HEADER, TOPIC } from '@app/contracts';
import { IncomingRecord, OutgoingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';
import type { DestinationSettings, SourceSettings } from '@app/settings';

import { CallHistory, DedupService } from './dedup.service';
import { RoutingSettings } from './route-decision';
import { RouterMetrics } from './router.metrics';
import { DeliveryProducer, RoutingService } from './routing.service';

const SOURCE_ID = '11111111-1111-4111-8111-111111111111';
const DESTINATION_ID = '22222222-2222-4222-8222-222222222222';
const VALUE = Buffer.from('{"version":1,"type":"identify","userId":"u-1","traits":{}}');

/** Records what it was asked to send; fails while `failure` is set. */
class FakeProducer implements DeliveryProducer {
  readonly sent: OutgoingRecord[] = [];
  failure?: Error;

  send(records: readonly OutgoingRecord[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.sent.push(...records);
    return Promise.resolve();
  }
}

/** Mutable settings of one source and its destinations. */
class FakeSettings implements RoutingSettings {
  sourceSettings: SourceSettings = {
    id: SOURCE_ID,
    name: 'web',
    enabled: true,
    allowedOrigins: [],
  };
  destinationSettings: DestinationSettings = {
    id: DESTINATION_ID,
    sourceId: SOURCE_ID,
    kind: 'webhooks',
    name: 'hooks',
    enabled: true,
    sharedSecretCiphertext: null,
    webhooks: [{ id: 'w-1', position: 0, url: 'https://example.com/hook', headers: {} }],
    filter: null,
  };
  /** Destinations after the first. */
  others: DestinationSettings[] = [];

  source(id: string): SourceSettings | undefined {
    return id === SOURCE_ID ? this.sourceSettings : undefined;
  }

  destinationsForSource(sourceId: string): readonly DestinationSettings[] {
    return sourceId === SOURCE_ID ? [this.destinationSettings, ...this.others] : [];
  }
}

/** A calls topic with nothing to read back. */
const NO_HISTORY: CallHistory = { read: () => Promise.resolve(0) };

function dedup(windowMs: number, metrics: RouterMetrics): DedupService {
  return new DedupService({ windowMs, seeds: [1, 2] }, NO_HISTORY, metrics);
}

function callRecord(headers: Record<string, string> = {}, offset = '42'): IncomingRecord {
  const all: Record<string, string> = {
    [HEADER.sourceId]: SOURCE_ID,
    [HEADER.callType]: 'identify',
    [HEADER.messageId]: 'm-1',
    [HEADER.integrations]: '{"Webhooks":true}',
    ...headers,
  };
  return {
    topic: TOPIC.calls,
    partition: 1,
    offset,
    key: Buffer.from(`${SOURCE_ID}:u-1`),
    value: VALUE,
    headers: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, Buffer.from(v)])),
    timestamp: 0,
  };
}

/** The value of one counter for the given labels (0 when never incremented). */
async function counted(
  counter:
    | RouterMetrics['filtered']
    | RouterMetrics['routed']
    | RouterMetrics['rejected']
    | RouterMetrics['destinationSkipped'],
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await counter.get();
  const match = values.find((v) =>
    Object.entries(labels).every(([name, value]) => v.labels[name as never] === value),
  );
  return match?.value ?? 0;
}

describe(RoutingService.name, () => {
  let producer: FakeProducer;
  let settings: FakeSettings;
  let metrics: RouterMetrics;
  let service: RoutingService;

  beforeEach(() => {
    producer = new FakeProducer();
    settings = new FakeSettings();
    metrics = new RouterMetrics(new Metrics('router-spec'));
    service = new RoutingService(settings, producer, metrics, dedup(900_000, metrics));
  });

  it('produces one delivery with the call bytes unchanged, then reports it', async () => {
    await expect(service.route(callRecord())).resolves.toEqual({
      kind: 'delivered',
      destinationIds: [DESTINATION_ID],
    });
    expect(producer.sent).toHaveLength(1);
    expect(producer.sent[0]).toMatchObject({
      topic: TOPIC.deliveries,
      key: `${DESTINATION_ID}:u-1`,
      headers: { [HEADER.destinationId]: DESTINATION_ID },
    });
    expect(producer.sent[0].value).toBe(VALUE);
    await expect(counted(metrics.routed, { type: 'identify' })).resolves.toBe(1);
    await expect(counted(metrics.deliveries, { type: 'identify' })).resolves.toBe(1);
  });

  it('produces nothing for a filtered call and counts it by reason', async () => {
    settings.destinationSettings = { ...settings.destinationSettings, enabled: false };
    await expect(service.route(callRecord())).resolves.toEqual({
      kind: 'filtered',
      reason: 'destination_disabled',
    });
    expect(producer.sent).toEqual([]);
    await expect(
      counted(metrics.filtered, { reason: 'destination_disabled', type: 'identify' }),
    ).resolves.toBe(1);
  });

  it('produces one delivery per destination that takes the call, in one send', async () => {
    const second = { ...settings.destinationSettings, id: 'd-2', name: 'CRM' };
    const picky = {
      ...settings.destinationSettings,
      id: 'd-3',
      name: 'Data',
      filter: compileFilter({ types: ['track'] }),
    };
    settings.others = [second, picky];
    const sends = jest.spyOn(producer, 'send');
    await expect(service.route(callRecord())).resolves.toEqual({
      kind: 'delivered',
      destinationIds: [DESTINATION_ID, 'd-2'],
    });
    expect(sends).toHaveBeenCalledTimes(1);
    expect(producer.sent.map((r) => r.key)).toEqual([`${DESTINATION_ID}:u-1`, 'd-2:u-1']);
    expect(producer.sent.every((r) => r.value === VALUE)).toBe(true);
    await expect(counted(metrics.routed, { type: 'identify' })).resolves.toBe(1);
    await expect(counted(metrics.deliveries, { type: 'identify' })).resolves.toBe(2);
    await expect(
      counted(metrics.destinationSkipped, { destination_id: 'd-3', reason: 'filter' }),
    ).resolves.toBe(1);
  });

  it('counts a destination the integrations object turns off', async () => {
    await expect(
      service.route(callRecord({ [HEADER.integrations]: '{"Webhooks":true,"hooks":false}' })),
    ).resolves.toEqual({ kind: 'filtered', reason: 'integrations' });
    await expect(
      counted(metrics.destinationSkipped, {
        destination_id: DESTINATION_ID,
        reason: 'integrations',
      }),
    ).resolves.toBe(1);
  });

  it('follows the settings as they are when each call is routed', async () => {
    await service.route(callRecord());
    settings.sourceSettings = { ...settings.sourceSettings, enabled: false };
    await expect(service.route(callRecord())).resolves.toMatchObject({
      reason: 'source_disabled',
    });
    expect(producer.sent).toHaveLength(1);
  });

  it('sends a record it cannot route to the rejected topic, and resolves', async () => {
    await expect(service.route(callRecord({ [HEADER.callType]: 'nope' }))).resolves.toEqual({
      kind: 'rejected',
      reason: 'invalid_call_type',
    });
    expect(producer.sent).toHaveLength(1);
    expect(producer.sent[0]).toMatchObject({
      topic: TOPIC.ingestRejected,
      headers: { [HEADER.reason]: 'invalid_call_type' },
    });
    await expect(counted(metrics.rejected, { reason: 'invalid_call_type' })).resolves.toBe(1);
  });

  it('drops a call whose messageId the source sent before, counting it', async () => {
    await service.route(callRecord({}, '42'));
    await expect(service.route(callRecord({}, '43'))).resolves.toEqual({ kind: 'duplicate' });
    expect(producer.sent).toHaveLength(1);
    await expect(counted(metrics.deduplicated, { type: 'identify' })).resolves.toBe(1);
  });

  it('routes again the same record handled again (a replay is not a duplicate)', async () => {
    await service.route(callRecord({}, '42'));
    await expect(service.route(callRecord({}, '42'))).resolves.toMatchObject({
      kind: 'delivered',
    });
    expect(producer.sent).toHaveLength(2);
  });

  it('drops a duplicate of a filtered call too', async () => {
    settings.destinationSettings = { ...settings.destinationSettings, enabled: false };
    await service.route(callRecord({}, '42'));
    settings.destinationSettings = { ...settings.destinationSettings, enabled: true };
    await expect(service.route(callRecord({}, '43'))).resolves.toEqual({ kind: 'duplicate' });
    expect(producer.sent).toEqual([]);
  });

  it('routes every copy with the window at 0 (de-duplication off)', async () => {
    service = new RoutingService(settings, producer, metrics, dedup(0, metrics));
    await service.route(callRecord({}, '42'));
    await service.route(callRecord({}, '43'));
    expect(producer.sent).toHaveLength(2);
  });

  it('throws when Kafka does not take the delivery, counting nothing as routed', async () => {
    producer.failure = new Error('broker away');
    await expect(service.route(callRecord())).rejects.toThrow('broker away');
    await expect(counted(metrics.routed, { type: 'identify' })).resolves.toBe(0);
  });

  it('throws when Kafka does not take a rejected record either', async () => {
    producer.failure = new Error('broker away');
    await expect(service.route(callRecord({ [HEADER.sourceId]: '' }))).rejects.toThrow(
      'broker away',
    );
  });
});
