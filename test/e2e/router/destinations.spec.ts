import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { HEADER } from '@app/contracts';
import { headerText } from '@app/kafka';
import { SettingsCache } from '@app/settings';

import { callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** The signature an implementation independent of the project computes: openssl's. */
function opensslHmacSha1(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', secret], { input: body });
  return out.toString().trim().split('= ').pop() ?? '';
}

/** The destinations of the source under test: name, filter, secret, enabled. */
const DESTINATIONS = [
  { name: 'CRM', filter: { types: ['identify'] }, secret: 'crm-secret', enabled: true },
  {
    name: 'Data',
    filter: { types: ['track'], eventPrefixes: ['Order '] },
    secret: 'data-secret',
    enabled: true,
  },
  {
    name: 'Partner',
    filter: {
      where: {
        and: [
          { field: 'properties.total', op: 'gte', value: 100 },
          { field: 'properties.currency', op: 'in', value: ['EUR', 'USD'] },
        ],
      },
    },
    secret: 'partner-secret',
    enabled: true,
  },
  { name: 'Off', filter: null, secret: 'off-secret', enabled: false },
  { name: 'Nobody', filter: { types: ['alias'] }, secret: 'nobody-secret', enabled: true },
] as const;

type Name = (typeof DESTINATIONS)[number]['name'];

/**
 * Several destinations on one source, made through the admin API, each with its own filter,
 * secret and receiver: ingest, the router and the dispatcher against the real broker and
 * database deliver each call to exactly the destinations that take it, each signed with its
 * own secret; the integrations object turns all of them or one of them off.
 */
describe('several destinations per source: filters, secrets, integrations', () => {
  const h = new DispatcherHarness();
  let admin: NestFastifyApplication;
  let adminUrl: string;
  const receivers = new Map<Name, WebhookReceiver>();
  const ids = new Map<Name, string>();
  let source: { id: string; writeKey: string };

  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await callAdmin(`${adminUrl}/admin/v1`, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  beforeAll(async () => {
    await h.start();
    admin = await startAdminBeside(h);
    adminUrl = await admin.getUrl();
    source = await api('POST', '/sources', { name: 'shop' });
    for (const d of DESTINATIONS) {
      const receiver = await new WebhookReceiver().start();
      receivers.set(d.name, receiver);
      const made = await api('POST', `/sources/${source.id}/destinations`, {
        name: d.name,
        filter: d.filter,
      });
      ids.set(d.name, made.id);
      const path = `/sources/${source.id}/destinations/${made.id}`;
      await api('PUT', `${path}/shared-secret`, { sharedSecret: d.secret });
      await api('POST', `${path}/webhooks`, { url: receiver.url(`/${d.name}`) });
      if (d.enabled) await api('POST', `${path}/enable`);
    }
    for (const d of DESTINATIONS) {
      const id = ids.get(d.name) ?? '';
      const wanted = (x?: { enabled: boolean; webhooks: readonly unknown[] }) =>
        x?.enabled === d.enabled && x.webhooks.length === 1;
      await h.routerSeesDestination(id, wanted);
      await h.dispatcherSees(id, wanted);
    }
    await eventually(
      () => (h.app.get(SettingsCache).sourceByWriteKey(source.writeKey) ? true : undefined),
      10_000,
      'the write key at ingest',
    );
  });

  afterAll(async () => {
    await Promise.all([...receivers.values()].map((r) => r.stop()));
    await admin?.close();
    await h.close();
  });

  /** Sends calls through ingest as one batch; they are accepted. */
  async function send(calls: Record<string, unknown>[]): Promise<void> {
    const answer = await h.post('/v1/batch', { batch: calls }, { basic: source.writeKey });
    expect(answer.status).toBe(200);
  }

  /** The names of the destinations the router produced a delivery of this call for. */
  function routedTo(messageId: string): string[] {
    const names = new Map([...ids].map(([name, id]) => [id, name]));
    return h
      .deliveriesOf(messageId)
      .map((r) => names.get(headerText(r, HEADER.destinationId) ?? '') ?? '?')
      .sort();
  }

  /** Message ids a receiver got, each checked against its destination's own secret. */
  function receivedBy(name: Name): string[] {
    const secret = DESTINATIONS.find((d) => d.name === name)?.secret ?? '';
    return (receivers.get(name)?.requests ?? [])
      .map((request) => {
        expect(request.headers['x-signature']).toBe(opensslHmacSha1(secret, request.body));
        return (JSON.parse(request.body.toString()) as { messageId: string }).messageId;
      })
      .sort();
  }

  async function receiversHold(expected: Partial<Record<Name, string[]>>): Promise<void> {
    for (const [name, messageIds] of Object.entries(expected) as [Name, string[]][]) {
      await receivers.get(name)?.received(messageIds.length);
    }
    for (const d of DESTINATIONS) {
      expect(receivedBy(d.name)).toEqual([...(expected[d.name] ?? [])].sort());
    }
  }

  it('gives each destination exactly the calls its filter matches, signed with its own secret', async () => {
    const m = Array.from({ length: 5 }, () => randomUUID());
    await send([
      { type: 'identify', userId: 'u1', traits: { plan: 'pro' }, messageId: m[0] },
      {
        type: 'track',
        userId: 'u2',
        event: 'Order Completed',
        properties: { total: 150, currency: 'EUR' },
        messageId: m[1],
      },
      {
        type: 'track',
        userId: 'u3',
        event: 'Order Refunded',
        properties: { total: 50, currency: 'EUR' },
        messageId: m[2],
      },
      {
        type: 'track',
        userId: 'u4',
        event: 'Signed Up',
        properties: { total: 200, currency: 'USD' },
        messageId: m[3],
      },
      { type: 'page', userId: 'u5', name: 'Home', messageId: m[4] },
    ]);
    await h.settled();
    expect(m.map(routedTo)).toEqual([['CRM'], ['Data', 'Partner'], ['Data'], ['Partner'], []]);
    await receiversHold({ CRM: [m[0]], Data: [m[1], m[2]], Partner: [m[1], m[3]] });
    await expect(
      h.routerMetric('sluice_router_destination_calls_skipped_total', {
        destination_id: ids.get('Nobody') ?? '',
        reason: 'filter',
      }),
    ).resolves.toBe(5);
  });

  it('turns every destination off with "Webhooks": false, and one with its own name', async () => {
    for (const r of receivers.values()) r.requests.length = 0;
    const order = {
      type: 'track',
      event: 'Order Completed',
      properties: { total: 150, currency: 'EUR' },
    };
    const m = Array.from({ length: 4 }, () => randomUUID());
    await send([
      { ...order, userId: 'u1', messageId: m[0], integrations: { Webhooks: false } },
      { ...order, userId: 'u2', messageId: m[1], integrations: { Data: false } },
      { ...order, userId: 'u3', messageId: m[2], integrations: { All: false, Partner: true } },
      { ...order, userId: 'u4', messageId: m[3], context: { integrations: { Partner: false } } },
    ]);
    await h.settled();
    expect(m.map(routedTo)).toEqual([[], ['Partner'], ['Partner'], ['Data']]);
    await receiversHold({ Data: [m[3]], Partner: [m[1], m[2]] });
  });

  it("keeps the older /destination routes acting on the source's first destination", async () => {
    const first = await api('GET', `/sources/${source.id}/destination`);
    expect(first).toMatchObject({
      id: ids.get('CRM'),
      name: 'CRM',
      filter: { types: ['identify'] },
    });
    const again = await callAdmin(
      `${adminUrl}/admin/v1`,
      'POST',
      `/sources/${source.id}/destination`,
      {
        name: 'Another',
      },
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('destination_exists');
  });
});
