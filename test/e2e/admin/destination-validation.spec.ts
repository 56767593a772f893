import { randomUUID } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { HEADER, TOPIC } from '@app/contracts';
import { headerText, IncomingRecord } from '@app/kafka';

import { AdminAnswer, callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** A source and its destination made through the admin API. */
interface Made {
  readonly sourceId: string;
  readonly writeKey: string;
  readonly id: string;
  /** The destination's path under /admin/v1. */
  readonly path: string;
}

/** A record's headers as text. */
function headersText(record: IncomingRecord): string {
  return Object.keys(record.headers)
    .map((name) => `${name}=${headerText(record, name) ?? ''}`)
    .join(' ');
}

/** Credentials that must never leave the request that carried them. */
const USER = 'hook-user-7f3a';
const PASSWORD = 'pw-9c1e-d4b2';

/**
 * Webhook settings that can never work are refused when saved through the admin API, and
 * what is accepted works through the real pipeline: admin API -> ingest -> router ->
 * dispatcher -> a local receiver, with the ledger written by the admin app. Rows saved
 * before the rules (written straight into PostgreSQL) do not stop the dispatcher.
 */
describe('webhook settings refused when saved, and what the receiver then sees', () => {
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

  function api(method: string, path: string, body?: unknown): Promise<AdminAnswer> {
    return callAdmin(`${adminUrl}/admin/v1`, method, path, body);
  }

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await api(method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  async function receiver(): Promise<WebhookReceiver> {
    const r = await new WebhookReceiver().start();
    receivers.push(r);
    return r;
  }

  /** A source and its (disabled, empty) destination made through the admin API. */
  async function destination(): Promise<Made> {
    const source = await ok('POST', '/sources', { name: 'shop' });
    const path = `/sources/${source.id}/destination`;
    const made = await ok('POST', path, { name: 'hooks' });
    return { sourceId: source.id, writeKey: source.writeKey, id: made.id, path };
  }

  /** Enables the destination and waits until the router and the dispatcher have it. */
  async function enable(d: Made): Promise<void> {
    await ok('POST', `${d.path}/enable`);
    await h.routerSees('the destination enabled', (x) => x?.enabled === true, d.sourceId);
    await h.dispatcherSees(d.id, (x) => x?.enabled === true);
  }

  it.each([
    'Transfer-Encoding',
    'connection',
    'Keep-Alive',
    'Upgrade',
    'Expect',
    'TE',
    'Trailer',
    'Proxy-Authorization',
    'X-Signature',
    'Content-Length',
  ])(
    'refuses the static header %s on every way of saving, naming it, storing nothing',
    async (name) => {
      const d = await destination();
      const headers = { 'X-Team': 'a', [name]: 'v' };
      const url = 'https://example.com/hook';
      const added = await api('POST', `${d.path}/webhooks`, { url, headers });
      const replaced = await api('PUT', `${d.path}/webhooks`, { webhooks: [{ url, headers }] });
      for (const answer of [added, replaced]) {
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('invalid_request');
        expect(answer.body.message).toContain(`header ${name} cannot be set`);
      }
      const hook = await ok('POST', `${d.path}/webhooks`, { url });
      const patched = await api('PATCH', `${d.path}/webhooks/${hook.id}`, { headers });
      expect(patched.status).toBe(400);
      expect(patched.body).toEqual({
        code: 'invalid_request',
        message: expect.stringContaining(name),
      });
      expect((await ok('GET', d.path)).webhooks).toEqual([
        { id: hook.id, position: 0, url, headers: {} },
      ]);
    },
  );

  it('refuses a URL with a user and password, never repeating them; the documented Authorization header reaches the receiver', async () => {
    const sink = await receiver();
    const d = await destination();
    const withCredentials = sink.url('/basic').replace('http://', `http://${USER}:${PASSWORD}@`);
    const refusals = [
      await api('POST', `${d.path}/webhooks`, { url: withCredentials }),
      await api('PUT', `${d.path}/webhooks`, { webhooks: [{ url: withCredentials }] }),
    ];
    for (const answer of refusals) {
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.message).toMatch(/url: must not carry a user or password/);
      expect(answer.body.message).toMatch(/Authorization header/);
      expect(answer.text).not.toContain(USER);
      expect(answer.text).not.toContain(PASSWORD);
    }
    expect((await ok('GET', d.path)).webhooks).toEqual([]);

    // What docs/api.md says to do instead: the same credentials as a static header.
    const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    await ok('POST', `${d.path}/webhooks`, {
      url: sink.url('/basic'),
      headers: { Authorization: basic },
    });
    await enable(d);
    const messageId = await h.track(d.writeKey, randomUUID());
    const [request] = await sink.received(1);
    expect(request.path).toBe('/basic');
    expect(request.headers.authorization).toBe(basic);
    expect(JSON.parse(request.body.toString()).messageId).toBe(messageId);
  });

  it('accepts a host name with an underscore and the dispatcher tries it (no invalid_url)', async () => {
    const d = await destination();
    const url = 'http://my_receiver:8080/hook';
    const hook = await api('POST', `${d.path}/webhooks`, { url });
    expect(hook.status).toBe(201);
    expect(hook.body.url).toBe(url);
    const patched = await api('PATCH', `${d.path}/webhooks/${hook.body.id}`, {
      url: 'http://sluice_receiver_1:9000/in',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.url).toBe('http://sluice_receiver_1:9000/in');
    await enable(d);
    const messageId = await h.track(d.writeKey, randomUUID());
    // No name service here knows the host: the attempt fails on the network and is retried,
    // which only a URL that passed every check can do.
    const [retry] = await eventually(
      () => {
        const records = h.outbound.records.filter(
          (r) =>
            r.topic !== TOPIC.deliveriesDead &&
            r.topic !== TOPIC.deliveryOutcomes &&
            headerText(r, HEADER.messageId) === messageId,
        );
        return records.length > 0 ? records : undefined;
      },
      20_000,
      'a retry-tier record of the delivery',
    );
    expect(['connection_error', 'timeout']).toContain(headerText(retry, HEADER.reason));
  });

  it('delivers a row saved before the rules without its connection-level header', async () => {
    const sink = await receiver();
    const source = await h.source();
    await h.webhookDestination(source.id, {
      urls: [sink.url('/legacy')],
      headers: { 'Transfer-Encoding': 'chunked', Connection: 'upgrade', 'X-Team': 'acme' },
    });
    const messageId = await h.track(source.writeKey, randomUUID());
    const [request] = await sink.received(1);
    expect(request.path).toBe('/legacy');
    expect(request.headers['x-team']).toBe('acme');
    expect(request.headers['transfer-encoding']).toBeUndefined();
    expect(request.headers['content-length']).toBe(String(request.body.length));
    expect(JSON.parse(request.body.toString()).messageId).toBe(messageId);
  });

  it('dead-letters a URL with credentials saved before the rules, sending nothing and showing them nowhere', async () => {
    const sink = await receiver();
    const source = await h.source();
    const legacy = sink.url('/creds').replace('http://', `http://${USER}:${PASSWORD}@`);
    const stored = await h.webhookDestination(source.id, { urls: [legacy] });
    const messageId = await h.track(source.writeKey, randomUUID());
    const [dead] = await h.outboundOf(TOPIC.deliveriesDead, messageId);
    expect(headerText(dead, HEADER.reason)).toBe('invalid_url');
    expect(sink.requests).toHaveLength(0);

    // The admin API shows the stored URL with its credentials hidden.
    const view = await api('GET', `/sources/${source.id}/destination`);
    expect(view.body.webhooks[0].url).toBe(sink.url('/creds').replace('http://', 'http://***@'));
    // Nor are they in the dead letter, the outcome records or the ledger (row and API).
    const item = await eventually(
      async () => {
        const page = (await ok('GET', `/deliveries?messageId=${messageId}`)) as {
          items: { id: string; outcome: string }[];
        };
        return page.items.find((i) => i.outcome === 'dead');
      },
      20_000,
      "the delivery's dead row in the ledger",
    );
    const detail = await api('GET', `/deliveries/${item.id}`);
    expect(detail.body.reason).toBe('invalid_url');
    const rows = await h.sql<{ row: string }>(
      'SELECT row_to_json(l)::text AS row FROM delivery_ledger l WHERE destination_id = $1',
      [stored.id],
    );
    expect(rows.length).toBeGreaterThan(0);
    const outcomes = h.outbound.records.filter((r) => r.topic === TOPIC.deliveryOutcomes);
    const everything = [
      view.text,
      detail.text,
      ...rows.map((r) => r.row),
      headersText(dead),
      dead.value?.toString() ?? '',
      ...outcomes.map((r) => `${headersText(r)} ${r.value?.toString() ?? ''}`),
    ].join('\n');
    expect(everything).toContain(messageId);
    expect(everything).not.toContain(USER);
    expect(everything).not.toContain(PASSWORD);
  });
});
