import { Logger } from '@nestjs/common';

import { parseBreakerChange, TOPIC } from '@app/contracts';
import { OutgoingRecord } from '@app/kafka';
import { Metrics } from '@app/observability';

import { BreakerObserver } from './breaker-observer';

describe(BreakerObserver.name, () => {
  let sent: OutgoingRecord[];
  let observer: BreakerObserver;
  let now: number;
  let registry: Metrics;
  const inUse = new Set(['d-1', 'd-2']);

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    sent = [];
    now = 1_000;
    const producer = {
      send: (records: readonly OutgoingRecord[]) => {
        sent.push(...records);
        return Promise.resolve();
      },
    };
    registry = new Metrics('test');
    observer = new BreakerObserver(
      registry,
      { producer, replica: 'host-1', now: () => now },
      (id) => inUse.has(id),
    );
  });

  afterEach(() => {
    observer.onApplicationShutdown();
    jest.restoreAllMocks();
  });

  const published = () =>
    sent.map((r) => ({ topic: r.topic, key: r.key, ...parseBreakerChange(r.value as string) }));

  it('publishes each change keyed by destination, as this replica', () => {
    observer.changed({
      destinationId: 'd-1',
      from: 'closed',
      to: 'open',
      reason: 'failure_share',
      at: 900,
    });
    expect(published()).toEqual([
      {
        topic: TOPIC.breakerChanges,
        key: 'd-1',
        destinationId: 'd-1',
        replica: 'host-1',
        state: 'open',
        since: 900,
        at: 1_000,
      },
    ]);
  });

  it('publishes again only the breakers that are not closed', () => {
    observer.changed({
      destinationId: 'd-1',
      from: 'closed',
      to: 'open',
      reason: 'failure_share',
      at: 900,
    });
    observer.changed({
      destinationId: 'd-2',
      from: 'half_open',
      to: 'closed',
      reason: 'probe_succeeded',
      at: 950,
    });
    sent = [];
    now = 31_000;
    observer.publishOpen();
    expect(published().map((r) => [r.destinationId, r.state, r.since, r.at])).toEqual([
      ['d-1', 'open', 900, 31_000],
    ]);
  });

  it('drops a destination deleted or disabled while open from the gauge and the refreshes', async () => {
    observer.changed({
      destinationId: 'd-1',
      from: 'closed',
      to: 'open',
      reason: 'failure_share',
      at: 900,
    });
    observer.changed({
      destinationId: 'd-2',
      from: 'closed',
      to: 'open',
      reason: 'failure_share',
      at: 900,
    });
    inUse.delete('d-2');
    sent = [];
    observer.publishOpen();
    expect(published().map((r) => r.destinationId)).toEqual(['d-1']);
    const gauge = await registry.registry.getSingleMetricAsString(
      'sluice_dispatcher_breaker_state',
    );
    expect(gauge).toContain('destination_id="d-1"');
    expect(gauge).not.toContain('destination_id="d-2"');
    inUse.add('d-2');
  });
});
