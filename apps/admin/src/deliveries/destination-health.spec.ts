import { destinationHealthView, HealthRecord } from './destination-health';

const CLOSED = { state: 'closed' as const, since: null, openReplicas: 0 };
const DESTINATION = { id: 'd-1', name: 'CRM', enabled: true };

function record(fields: Partial<HealthRecord>): HealthRecord {
  return {
    window: 'hour',
    webhook_id: null,
    attempts: '4',
    successes: '3',
    p50: 12.345,
    p99: 80,
    last_error: null,
    ...fields,
  };
}

describe(destinationHealthView.name, () => {
  it("gives the destination's figures per window, rounded, with its last error", () => {
    const view = destinationHealthView(
      DESTINATION,
      [],
      [
        record({
          last_error: {
            at: '2030-01-01T10:00:00.5+00:00',
            webhookId: 'w-1',
            kind: 'retryable',
            reason: 'http_5xx',
            status: 503,
            detail: 'HTTP 503',
          },
        }),
      ],
      CLOSED,
    );
    expect(view.hour).toEqual({
      attempts: 4,
      successShare: 0.75,
      latencyP50Ms: 12.3,
      latencyP99Ms: 80,
      lastError: {
        at: '2030-01-01T10:00:00.500Z',
        webhookId: 'w-1',
        reason: 'http_5xx',
        status: 503,
        detail: 'HTTP 503',
      },
    });
    expect(view.day).toEqual({
      attempts: 0,
      successShare: null,
      latencyP50Ms: null,
      latencyP99Ms: null,
      lastError: null,
    });
    expect(view).toMatchObject({ destinationId: 'd-1', name: 'CRM', breaker: CLOSED });
  });

  it('lists current webhooks in order with their URLs, then removed ones without', () => {
    const view = destinationHealthView(
      DESTINATION,
      [
        { id: 'w-2', url: 'https://b.test/' },
        { id: 'w-1', url: 'https://a.test/' },
      ],
      [
        record({ window: 'day', webhook_id: 'w-gone', attempts: '2', successes: '0' }),
        record({ window: 'day', webhook_id: 'w-1', attempts: '5', successes: '5' }),
      ],
      CLOSED,
    );
    expect(view.webhooks.map((w) => [w.webhookId, w.url, w.day.attempts, w.hour.attempts])).toEqual(
      [
        ['w-2', 'https://b.test/', 0, 0],
        ['w-1', 'https://a.test/', 5, 0],
        ['w-gone', null, 2, 0],
      ],
    );
    expect(view.webhooks[2].day.successShare).toBe(0);
  });
});
