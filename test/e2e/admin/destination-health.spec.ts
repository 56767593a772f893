import { randomUUID } from 'node:crypto';

import { AdminHarness } from '../../helpers/admin-harness';
import { insertLedgerRows } from '../../helpers/ledger-fixtures';

/**
 * A destination's health from ledger rows written straight into `delivery_ledger`: the
 * requests of each attempt counted per window and per webhook, latency percentiles, the
 * latest failure, and the breaker (closed: no dispatcher runs here).
 */
const h = new AdminHarness();
beforeAll(() => h.start(), 60_000);
afterAll(() => h.close());

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** One attempt's history entry with each webhook's answer. */
function attempt(at: number, answers: { webhookId: string; status: number; latencyMs: number }[]) {
  return {
    attempts: 1,
    at: iso(at),
    result: answers.some((a) => a.status < 300) ? 'delivered' : 'retrying',
    webhooks: answers.map((a) =>
      a.status < 300
        ? { webhookId: a.webhookId, kind: 'success', status: a.status, latencyMs: a.latencyMs }
        : {
            webhookId: a.webhookId,
            kind: 'retryable',
            status: a.status,
            reason: 'http_5xx',
            detail: `HTTP ${a.status}`,
            latencyMs: a.latencyMs,
          },
    ),
  };
}

it("answers a destination's requests of the last hour and day, per webhook, with its breaker", async () => {
  const source = await h.call('POST', '/admin/v1/sources', { name: 'health' });
  const sourceId = source.body.id as string;
  const created = await h.call('POST', `/admin/v1/sources/${sourceId}/destinations`, {
    name: 'Health',
  });
  const destinationId = created.body.id as string;
  const path = `/admin/v1/sources/${sourceId}/destinations/${destinationId}/webhooks`;
  const a = await h.call('POST', path, { url: 'https://a.example.com/in' });
  const b = await h.call('POST', path, { url: 'https://b.example.com/in' });
  const [wa, wb] = [a.body.id as string, b.body.id as string];
  const now = Date.now();
  const old = now - 3 * 60 * MINUTE;
  const recent = now - 10 * MINUTE;
  await insertLedgerRows(h.db.url, [
    {
      sourceId,
      destinationId,
      firstAttemptAt: iso(old),
      history: [attempt(old, [{ webhookId: wa, status: 200, latencyMs: 10 }])],
    },
    {
      sourceId,
      destinationId,
      firstAttemptAt: iso(recent),
      history: [
        attempt(recent, [
          { webhookId: wa, status: 503, latencyMs: 30 },
          { webhookId: wb, status: 200, latencyMs: 20 },
        ]),
      ],
    },
    // Another destination's delivery is not counted.
    {
      sourceId,
      firstAttemptAt: iso(recent),
      history: [attempt(recent, [{ webhookId: wa, status: 500, latencyMs: 99 }])],
    },
  ]);

  const answer = await h.call('GET', `/admin/v1/destinations/${destinationId}/health`);
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({
    destinationId,
    name: 'Health',
    breaker: { state: 'closed', openReplicas: 0 },
    day: { attempts: 3, successShare: 2 / 3, latencyP50Ms: 20 },
    hour: {
      attempts: 2,
      successShare: 0.5,
      lastError: { webhookId: wa, reason: 'http_5xx', status: 503, detail: 'HTTP 503' },
    },
  });
  expect(answer.body.hour.latencyP99Ms).toBeCloseTo(29.9, 1);
  expect(answer.body.webhooks).toEqual([
    expect.objectContaining({
      webhookId: wa,
      url: 'https://a.example.com/in',
      day: expect.objectContaining({ attempts: 2, successShare: 0.5 }),
      hour: expect.objectContaining({ attempts: 1, successShare: 0 }),
    }),
    expect.objectContaining({
      webhookId: wb,
      url: 'https://b.example.com/in',
      hour: expect.objectContaining({ attempts: 1, successShare: 1, lastError: null }),
    }),
  ]);
});

it('answers a destination without deliveries with no attempts', async () => {
  const source = await h.call('POST', '/admin/v1/sources', { name: 'quiet' });
  const created = await h.call('POST', `/admin/v1/sources/${source.body.id}/destinations`, {
    name: 'Quiet',
  });
  const answer = await h.call('GET', `/admin/v1/destinations/${created.body.id}/health`);
  expect(answer.body).toMatchObject({
    hour: { attempts: 0, successShare: null, lastError: null },
    day: { attempts: 0, successShare: null },
    webhooks: [],
  });
});

it.each([
  ['an id that is not a UUID', 'nope', 400, 'invalid_request'],
  ['an unknown destination', randomUUID(), 404, 'destination_not_found'],
])('refuses %s', async (_what, id, status, code) => {
  const answer = await h.call('GET', `/admin/v1/destinations/${id}/health`);
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ code });
});
