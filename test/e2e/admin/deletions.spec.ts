import { randomUUID } from 'node:crypto';

import { deliveryIdFor, DeliveryOutcome, HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';

import { Housekeeping } from '../../../apps/admin/src/housekeeping';
import { PipelineHarness, PipelineSource } from '../../helpers/pipeline-harness';
import { eventually } from '../../helpers/services';

/**
 * Deletion requests through the admin API and the real router: one `delete` delivery per
 * (user, affected source) with the exact body on sluice.deliveries.v1, none for sources
 * without an enabled destination; receipts from outcome records on
 * sluice.deliveries.outcomes.v1 (published here as the dispatcher publishes them).
 */
const h = new PipelineHarness();
let withHooks: PipelineSource;
let alsoWithHooks: PipelineSource;
let disabled: PipelineSource;
let bare: PipelineSource;

beforeAll(async () => {
  await h.start();
  withHooks = await h.apiSource();
  alsoWithHooks = await h.apiSource({
    webhookUrls: ['https://a.example.com/1', 'https://b.example.com/2'],
  });
  disabled = await h.apiSource({ destination: 'disabled' });
  bare = await h.apiSource({ destination: 'none' });
}, 60_000);
afterAll(() => h.close());

interface NotificationRow {
  id: string;
  source_id: string;
  destination_id: string;
  user_id: string;
  status: string;
}

async function notifications(requestId: string): Promise<NotificationRow[]> {
  return h.sql<NotificationRow>(
    `SELECT id, source_id, destination_id, user_id, status FROM deletion_notification
     WHERE request_id = $1 ORDER BY source_id, user_id`,
    [requestId],
  );
}

/** Deliveries read so far of these notification ids. */
function deliveriesOf(rows: readonly NotificationRow[]): IncomingRecord[] {
  const ids = new Set(rows.map((r) => r.id));
  return h.deliveries.records.filter(
    (r) => r.topic === TOPIC.deliveries && ids.has(headerText(r, HEADER.messageId) ?? ''),
  );
}

function outcome(
  row: NotificationRow,
  result: DeliveryOutcome['result'],
  reason?: string,
): DeliveryOutcome {
  return {
    deliveryId: deliveryIdFor(row.destination_id, row.id),
    messageId: row.id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    type: 'delete',
    result,
    ...(reason ? { reason } : {}),
    attempts: result === 'delivered' ? 1 : 3,
    at: new Date().toISOString(),
  };
}

describe('a deletion request', () => {
  it('sends one exact delete per user to every source with an enabled destination, and no other', async () => {
    const created = await h.api('POST', '/deletion-requests', {
      userIds: ['u-1', 'u-2', 'u-1', 'ü "3"'],
    });
    expect(created.status).toBe(201);
    const request = created.body;
    expect(request).toMatchObject({
      userCount: 3,
      sourceIds: null,
      publishedAt: expect.any(String),
      totals: { notifications: 6, delivered: 0, pending: 6, failed: 0 },
    });
    const targets = request.targets as { sourceId: string; destinationId: string }[];
    expect(targets.map((t) => t.sourceId).sort()).toEqual([withHooks.id, alsoWithHooks.id].sort());
    for (const t of targets) {
      expect(t).toMatchObject({ notifications: 3, delivered: 0, pending: 3, failed: 0 });
    }

    const rows = await notifications(request.id);
    expect(rows).toHaveLength(6);
    await h.settled();
    const deliveries = deliveriesOf(rows);
    expect(deliveries).toHaveLength(6);
    for (const row of rows) {
      const [delivery, ...more] = deliveries.filter(
        (d) => headerText(d, HEADER.messageId) === row.id,
      );
      expect(more).toEqual([]);
      expect(delivery.key?.toString()).toBe(`${row.destination_id}:${row.user_id}`);
      expect(headerText(delivery, HEADER.destinationId)).toBe(row.destination_id);
      expect(headerText(delivery, HEADER.callType)).toBe('delete');
      expect(delivery.value?.toString()).toBe(
        JSON.stringify({ type: 'delete', userId: row.user_id, timestamp: request.createdAt }),
      );
    }
    // The sources without an enabled destination got nothing: not even a call on the topic.
    for (const source of [disabled, bare]) {
      expect(h.reader.withHeader(TOPIC.calls, HEADER.sourceId, source.id)).toEqual([]);
    }
    expect(
      h.deliveries.withHeader(TOPIC.deliveries, HEADER.destinationId, disabled.destinationId!),
    ).toEqual([]);
    expect(request.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('notifies only the sources it names', async () => {
    const created = await h.api('POST', '/deletion-requests', {
      userIds: ['u-9'],
      sourceIds: [alsoWithHooks.id, bare.id],
    });
    expect(created.status).toBe(201);
    expect(created.body.sourceIds).toEqual([alsoWithHooks.id, bare.id]);
    expect(created.body.targets).toEqual([
      {
        sourceId: alsoWithHooks.id,
        destinationId: alsoWithHooks.destinationId,
        notifications: 1,
        delivered: 0,
        pending: 1,
        failed: 0,
      },
    ]);
    const rows = await notifications(created.body.id);
    await h.settled();
    expect(deliveriesOf(rows).map((d) => headerText(d, HEADER.destinationId))).toEqual([
      alsoWithHooks.destinationId,
    ]);
  });

  it('is a request with no notification when no named source has an enabled destination', async () => {
    const created = await h.api('POST', '/deletion-requests', {
      userIds: ['u-1'],
      sourceIds: [disabled.id],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ targets: [], totals: { notifications: 0 } });
  });
});

describe('receipts', () => {
  /** Waits until the request shows these totals. */
  async function totals(requestId: string, expected: Record<string, number>): Promise<void> {
    await eventually(
      async () => {
        const got = await h.api('GET', `/deletion-requests/${requestId}`);
        const t = got.body.totals as Record<string, number>;
        return Object.entries(expected).every(([k, v]) => t[k] === v) ? true : undefined;
      },
      15_000,
      `totals ${JSON.stringify(expected)}`,
    );
  }

  it('move from pending to delivered or failed as outcomes arrive, idempotently', async () => {
    const created = await h.apiOk('POST', '/deletion-requests', {
      userIds: ['r-1', 'r-2', 'r-3', 'r-4'],
      sourceIds: [withHooks.id],
    });
    const rows = await notifications(created.id);
    const [one, two, three] = rows;
    await h.publishOutcomes([
      outcome(one, 'delivered'),
      outcome(two, 'dead', 'permanent_status'),
      outcome(three, 'discarded', 'destination_disabled'),
    ]);
    await totals(created.id, { notifications: 4, delivered: 1, pending: 1, failed: 2 });
    const got = await h.apiOk('GET', `/deletion-requests/${created.id}`);
    expect(got.targets).toEqual([
      {
        sourceId: withHooks.id,
        destinationId: withHooks.destinationId,
        notifications: 4,
        delivered: 1,
        pending: 1,
        failed: 2,
      },
    ]);
    const [stored] = await h.sql<{ reason: string; attempts: number }>(
      'SELECT reason, attempts FROM deletion_notification WHERE id = $1',
      [two.id],
    );
    expect(stored).toEqual({ reason: 'permanent_status', attempts: 3 });

    // Duplicates and a late failure never move a delivered notification back; a success
    // after a failure (a duplicate delivery that got through) counts as delivered. Records
    // that are not outcomes, or name no notification, are skipped without stopping the rest.
    await h.publishOutcomes([
      outcome(one, 'delivered'),
      outcome(one, 'dead', 'retry_window_closed'),
      'not json',
      JSON.stringify({ messageId: 'x' }),
      { ...outcome(one, 'delivered'), messageId: '00000000-0000-4000-8000-000000000000' },
      { ...outcome(three, 'delivered'), type: 'track' },
      outcome(two, 'dead', 'permanent_status'),
      outcome(three, 'delivered'),
    ]);
    await totals(created.id, { delivered: 2, pending: 1, failed: 1 });
    const statuses = Object.fromEntries(
      (await notifications(created.id)).map((r) => [r.id, r.status]),
    );
    expect(statuses).toEqual({
      [one.id]: 'delivered',
      [two.id]: 'failed',
      [three.id]: 'delivered',
      [rows[3].id]: 'pending',
    });
  });

  it('are counted in the metrics', async () => {
    const text = await (await fetch(`${h.adminUrl}/metrics`)).text();
    const value = (line: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.split(' ')
          .pop(),
      );
    expect(value('sluice_admin_deletion_requests_total')).toBeGreaterThanOrEqual(4);
    expect(value('sluice_admin_delete_notifications_published_total')).toBeGreaterThanOrEqual(11);
    expect(
      value('sluice_admin_delivery_outcomes_total{result="delivered",effect="recorded"'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('are listed with every request', async () => {
    const list = await h.api('GET', '/deletion-requests');
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThanOrEqual(4);
    expect(list.body[0]).toMatchObject({ totals: expect.any(Object), targets: expect.any(Array) });
  });
});

describe('a request stored but never marked published (the app stopped in between)', () => {
  /** Stores a request and its notifications to `withHooks` as `create` does, unpublished. */
  async function storeUnpublished(age: string, userIds: string[]): Promise<string> {
    const [request] = await h.sql<{ id: string }>(
      `INSERT INTO deletion_request (user_count, source_ids, created_at, published_at)
       VALUES ($1, NULL, date_trunc('milliseconds', now()) - $2::interval, NULL) RETURNING id`,
      [userIds.length, age],
    );
    for (const userId of userIds) {
      await h.sql(
        `INSERT INTO deletion_notification (id, request_id, source_id, destination_id, user_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [randomUUID(), request.id, withHooks.id, withHooks.destinationId, userId],
      );
    }
    return request.id;
  }

  it('is published again with its stored notifications once it is old enough; a recent one is left alone', async () => {
    const old = await storeUnpublished('1 hour', ['gone-1', 'gone-2']);
    const recent = await storeUnpublished('1 second', ['gone-3']);
    const housekeeping = h.adminApp.get(Housekeeping);
    // A round the app's timer began before the rows were stored may answer the first call.
    await eventually(
      async () => {
        await housekeeping.run();
        const [row] = await h.sql<{ published_at: Date | null }>(
          'SELECT published_at FROM deletion_request WHERE id = $1',
          [old],
        );
        return row.published_at ? true : undefined;
      },
      15_000,
      'a round that publishes the old request',
    );

    const request = await h.apiOk('GET', `/deletion-requests/${old}`);
    expect(request.publishedAt).toEqual(expect.any(String));
    expect(request.totals).toEqual({ notifications: 2, delivered: 0, pending: 2, failed: 0 });
    const rows = await notifications(old);
    await h.settled();
    const deliveries = deliveriesOf(rows);
    expect(deliveries).toHaveLength(2);
    for (const row of rows) {
      const delivery = deliveries.find((d) => headerText(d, HEADER.messageId) === row.id);
      expect(delivery?.value?.toString()).toBe(
        JSON.stringify({ type: 'delete', userId: row.user_id, timestamp: request.createdAt }),
      );
    }

    expect((await h.apiOk('GET', `/deletion-requests/${recent}`)).publishedAt).toBeNull();
    expect(deliveriesOf(await notifications(recent))).toEqual([]);
    // Published once: a later round finds nothing to do.
    await expect(housekeeping.run()).resolves.toMatchObject({ republished: 0 });
  });
});

describe('bad input', () => {
  it.each([
    ['an empty user list', { userIds: [] }, /userIds: .*at least 1/],
    [
      'more than 1,000 users',
      { userIds: Array.from({ length: 1_001 }, (_, i) => `u${i}`) },
      /userIds: .*no more than 1000/,
    ],
    ['no user list', {}, /userIds/],
    ['an empty user id', { userIds: [''] }, /userIds/],
    ['a source id that is not a UUID', { userIds: ['u'], sourceIds: ['nope'] }, /sourceIds/],
    ['an unknown field', { userIds: ['u'], all: true }, /all/],
  ])('refuses %s with 400 invalid_request naming the field', async (_what, body, message) => {
    const answer = await h.api('POST', '/deletion-requests', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(message),
    });
  });

  it('refuses unknown sources with 404, naming them, and stores nothing', async () => {
    const before = await h.sql('SELECT id FROM deletion_request');
    const unknown = '00000000-0000-4000-8000-000000000001';
    const answer = await h.api('POST', '/deletion-requests', {
      userIds: ['u'],
      sourceIds: [withHooks.id, unknown],
    });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      code: 'source_not_found',
      message: expect.stringContaining(unknown),
    });
    await expect(h.sql('SELECT id FROM deletion_request')).resolves.toHaveLength(before.length);
  });

  it('answers 404 for an unknown request, 401 without a token', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000002', 'not-a-uuid']) {
      const answer = await h.api('GET', `/deletion-requests/${id}`);
      expect(answer).toMatchObject({ status: 404, body: { code: 'deletion_request_not_found' } });
    }
    const anonymous = await h.api('POST', '/deletion-requests', { userIds: ['u'] }, null);
    expect(anonymous).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });
});
