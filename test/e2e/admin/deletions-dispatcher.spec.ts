import { execFileSync } from 'node:child_process';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** A deletion request as GET answers it, the parts read here. */
interface RequestView {
  readonly totals: Record<'notifications' | 'delivered' | 'pending' | 'failed', number>;
  readonly targets: {
    sourceId: string;
    destinationId: string;
    delivered: number;
    pending: number;
    failed: number;
  }[];
}

/** The signature an implementation independent of the project computes: openssl's. */
function opensslHmacSha1(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', secret], { input: body });
  return out.toString().trim().split('= ').pop() ?? '';
}

/**
 * The whole path of a deletion request: admin API -> sluice.calls.v1 -> the real router ->
 * the real dispatcher -> local webhook receivers (signatures checked with openssl) -> outcome
 * records -> receipts on the request. Retry ladder 1 s, 2 s; window 8 s.
 */
describe('a deletion request through the dispatcher', () => {
  const h = new DispatcherHarness();
  const receivers: WebhookReceiver[] = [];
  let admin: NestFastifyApplication;
  let adminUrl: string;

  beforeAll(async () => {
    await h.start();
    admin = await startAdminBeside(h);
    adminUrl = await admin.getUrl();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await admin?.close();
    await h.close();
  });

  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await callAdmin(`${adminUrl}/admin/v1`, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  /** A source with an enabled destination (made through the admin API) posting to `sinks`. */
  async function sourceFor(sinks: WebhookReceiver[], secret: string) {
    const source = await api('POST', '/sources', { name: 'shop' });
    const path = `/sources/${source.id}/destination`;
    const destination = await api('POST', path, { name: 'hooks' });
    for (const sink of sinks) await api('POST', `${path}/webhooks`, { url: sink.url() });
    await api('PUT', `${path}/shared-secret`, { sharedSecret: secret });
    await api('POST', `${path}/enable`);
    await h.routerSees('the destination', (d) => d?.enabled === true, source.id);
    await h.dispatcherSees(destination.id, (d) => d?.enabled === true);
    return { sourceId: source.id as string, destinationId: destination.id as string };
  }

  async function receiver(): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver().start();
    receivers.push(r);
    return r;
  }

  it('reaches every webhook once per user with the exact signed body; receipts reach delivered, and failed for a failing endpoint', async () => {
    const [a1, a2, b, failing] = await Promise.all([
      receiver(),
      receiver(),
      receiver(),
      receiver(),
    ]);
    failing.answer = () => ({ status: 500 });
    const sourceA = await sourceFor([a1, a2], 'secret-a');
    const sourceB = await sourceFor([b], 'secret-b');
    const sourceF = await sourceFor([failing], 'secret-f');
    const bare = await api('POST', '/sources', { name: 'no destination' });

    const request = await api('POST', '/deletion-requests', {
      userIds: ['user-1', 'user-2'],
      sourceIds: [sourceA.sourceId, sourceB.sourceId, sourceF.sourceId, bare.id],
    });
    expect(request.totals).toEqual({ notifications: 6, delivered: 0, pending: 6, failed: 0 });
    const bodies = ['user-1', 'user-2'].map((userId) =>
      JSON.stringify({ type: 'delete', userId, timestamp: request.createdAt }),
    );

    // A failing endpoint shows pending while the dispatcher retries.
    await failing.received(2);
    const during: RequestView = await api('GET', `/deletion-requests/${request.id}`);
    const target = (view: RequestView, sourceId: string) =>
      view.targets.find((t) => t.sourceId === sourceId);
    expect(target(during, sourceF.sourceId)).toMatchObject({ pending: 2, failed: 0 });

    const receipts = await eventually(
      async () => {
        const view: RequestView = await api('GET', `/deletion-requests/${request.id}`);
        return view.totals.delivered === 4 && view.totals.failed === 2 ? view : undefined;
      },
      30_000,
      'receipts: 4 delivered, 2 failed',
    );
    expect(receipts.totals).toEqual({ notifications: 6, delivered: 4, pending: 0, failed: 2 });
    expect(target(receipts, sourceA.sourceId)).toMatchObject({ delivered: 2, failed: 0 });
    expect(target(receipts, sourceB.sourceId)).toMatchObject({ delivered: 2, failed: 0 });
    expect(target(receipts, sourceF.sourceId)).toMatchObject({ delivered: 0, failed: 2 });
    expect(target(receipts, bare.id)).toBeUndefined();

    for (const [sink, secret] of [
      [a1, 'secret-a'],
      [a2, 'secret-a'],
      [b, 'secret-b'],
    ] as const) {
      expect(sink.requests.map((r) => r.body.toString()).sort()).toEqual(bodies);
      for (const r of sink.requests) {
        expect(r.headers['x-signature']).toBe(opensslHmacSha1(secret, r.body));
      }
    }
    // The failing endpoint got the same exact, signed bodies, more than once (retries).
    expect(new Set(failing.requests.map((r) => r.body.toString()))).toEqual(new Set(bodies));
    expect(failing.requests.length).toBeGreaterThan(2);
    for (const r of failing.requests) {
      expect(r.headers['x-signature']).toBe(opensslHmacSha1('secret-f', r.body));
    }
  }, 60_000);

  it('notifies each destination of a source once per user, whatever its filter, with a receipt each', async () => {
    const [crm, data] = await Promise.all([receiver(), receiver()]);
    const first = await sourceFor([crm], 'secret-crm');
    const path = `/sources/${first.sourceId}/destinations`;
    const second = await api('POST', path, { name: 'Data', filter: { types: ['track'] } });
    await api('POST', `${path}/${second.id}/webhooks`, { url: data.url() });
    await api('PUT', `${path}/${second.id}/shared-secret`, { sharedSecret: 'secret-data' });
    await api('POST', `${path}/${second.id}/enable`);
    await h.routerSeesDestination(second.id, (d) => d?.enabled === true);
    await h.dispatcherSees(second.id, (d) => d?.enabled === true);

    const request = await api('POST', '/deletion-requests', {
      userIds: ['user-1', 'user-2'],
      sourceIds: [first.sourceId],
    });
    expect(request.totals).toMatchObject({ notifications: 4, pending: 4 });
    const receipts = await eventually(
      async () => {
        const view: RequestView = await api('GET', `/deletion-requests/${request.id}`);
        return view.totals.delivered === 4 ? view : undefined;
      },
      30_000,
      'receipts: 4 delivered',
    );
    expect(receipts.targets.map((t) => [t.destinationId, t.delivered]).sort()).toEqual(
      [
        [first.destinationId, 2],
        [second.id, 2],
      ].sort(),
    );
    await h.settled();
    // One delivery per (user, destination): each notification reaches its own destination only.
    const produced = h.deliveries.records.filter(
      (r) => r.topic === TOPIC.deliveries && headerText(r, HEADER.sourceId) === first.sourceId,
    );
    expect(produced.map((r) => headerText(r, HEADER.destinationId)).sort()).toEqual(
      [first.destinationId, first.destinationId, second.id, second.id].sort(),
    );
    const bodies = ['user-1', 'user-2'].map((userId) =>
      JSON.stringify({ type: 'delete', userId, timestamp: request.createdAt }),
    );
    for (const [sink, secret] of [
      [crm, 'secret-crm'],
      [data, 'secret-data'],
    ] as const) {
      expect(sink.requests.map((r) => r.body.toString()).sort()).toEqual(bodies);
      for (const r of sink.requests) {
        expect(r.headers['x-signature']).toBe(opensslHmacSha1(secret, r.body));
      }
    }
  }, 60_000);
});
