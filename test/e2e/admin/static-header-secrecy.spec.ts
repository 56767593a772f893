import { randomBytes, randomUUID } from 'node:crypto';

import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { TOPIC } from '@app/contracts';
import { IncomingRecord } from '@app/kafka';

import { MASKED_HEADER_VALUE } from '../../../apps/admin/src/destinations/header-values';
import { AdminAnswer, callAdmin, startAdminBeside } from '../../helpers/admin-harness';
import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { eventually } from '../../helpers/services';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** The credential under test: made for this run, so finding it anywhere is a leak. */
const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const AUTHORIZATION = `Bearer ${TOKEN}`;

/** Everything a record carries, as text: value and headers. */
function recordText(record: IncomingRecord): string {
  const headers = Object.entries(record.headers).map(([name, v]) => `${name}=${v?.toString()}`);
  return `${record.value?.toString() ?? ''} ${headers.join(' ')}`;
}

/**
 * A static `Authorization` header set through the admin API reaches the receiver, and its
 * value appears nowhere else: not in an admin answer, a log line of the four apps, a record
 * of the topics the call crossed (calls, deliveries, a retry tier, outcomes), the ledger, or
 * the webhook's row (stored sealed).
 */
describe('a static Authorization header', () => {
  const h = new DispatcherHarness();
  let receiver: WebhookReceiver;
  let admin: NestFastifyApplication;
  let adminUrl: string;
  let logged: jest.SpyInstance[] = [];

  beforeAll(async () => {
    // Every app's log lines, at the most verbose level, from before they start; kept for the
    // assertions rather than printed (the Kafka client's debug lines are many).
    logged = [process.stdout, process.stderr].map((stream) =>
      jest.spyOn(stream, 'write').mockImplementation(() => true),
    );
    await h.start({ LOG_LEVEL: 'verbose' });
    admin = await startAdminBeside(h, { LOG_LEVEL: 'verbose' });
    adminUrl = await admin.getUrl();
    receiver = await new WebhookReceiver().start();
    // The first attempt fails, so the delivery crosses a retry tier too.
    receiver.answer = (_request, index) => ({ status: index === 0 ? 503 : 200 });
  }, 60_000);

  afterAll(async () => {
    logged.forEach((spy) => spy.mockRestore());
    await receiver?.stop();
    await admin?.close();
    await h.close();
  });

  async function ok(method: string, path: string, body?: unknown): Promise<AdminAnswer> {
    const answer = await callAdmin(`${adminUrl}/admin/v1`, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer;
  }

  it('reaches the receiver and appears in no answer, log line, record, ledger row or stored row', async () => {
    const source = (await ok('POST', '/sources', { name: 'shop' })).body;
    const path = `/sources/${source.id}/destinations`;
    const destination = (await ok('POST', path, { name: 'hooks' })).body;
    const hooks = `${path}/${destination.id}/webhooks`;
    const answers: AdminAnswer[] = [];
    const created = await ok('POST', hooks, {
      url: receiver.url('/hook'),
      headers: { Authorization: AUTHORIZATION },
    });
    answers.push(created);
    // What GET shows, sent back unchanged, keeps the stored value.
    const shown = await ok('GET', `${path}/${destination.id}`);
    answers.push(shown);
    const [webhook] = shown.body.webhooks;
    expect(webhook.headers).toEqual({ Authorization: MASKED_HEADER_VALUE });
    answers.push(await ok('PATCH', `${hooks}/${webhook.id}`, { headers: webhook.headers }));
    answers.push(await ok('POST', `${path}/${destination.id}/enable`));
    answers.push(await ok('GET', path));
    answers.push(await ok('GET', `/sources/${source.id}/destination`));
    await h.routerSeesDestination(destination.id, (d) => d?.enabled === true);
    await h.dispatcherSees(destination.id, (d) => d?.enabled === true);

    const messageId = await h.track(source.writeKey, randomUUID());
    const requests = await receiver.received(2);
    for (const request of requests) expect(request.headers.authorization).toBe(AUTHORIZATION);
    expect(JSON.parse(requests[1].body.toString()).messageId).toBe(messageId);

    const ledger = await eventually(async () => {
      const rows = await h.sql<{ state: string; row: string }>(
        `SELECT "state", row_to_json(l)::text AS row FROM "delivery_ledger" l
          WHERE "message_id" = $1`,
        [messageId],
      );
      return rows[0]?.state === 'delivered' ? rows : undefined;
    }, 20_000);
    // The ledger was written from the outcomes topic; the readers have read it by now too.
    await eventually(
      () => (h.outbound.records.some((r) => r.topic === TOPIC.deliveryOutcomes) ? true : undefined),
      10_000,
      'an outcome record',
    );
    const records = [...h.reader.records, ...h.deliveries.records, ...h.outbound.records];
    const crossed = new Set(records.map((r) => r.topic));
    expect([...crossed]).toEqual(
      expect.arrayContaining([TOPIC.calls, TOPIC.deliveries, TOPIC.deliveryOutcomes]),
    );
    expect([...crossed].some((topic) => topic.startsWith('sluice.deliveries.retry.'))).toBe(true);
    const stored = await h.sql<{ headers: string }>(
      'SELECT "headers"::text AS headers FROM "webhook" WHERE "id" = $1',
      [webhook.id],
    );

    expect(answers.map((a) => a.text).join('\n')).not.toContain(TOKEN);
    expect(records.map(recordText).join('\n')).not.toContain(TOKEN);
    expect(ledger.map((r) => r.row).join('\n')).not.toContain(TOKEN);
    expect(stored[0].headers).not.toContain(TOKEN);
    expect(stored[0].headers).toContain('Authorization');
    const logText = logged
      .flatMap((spy) => spy.mock.calls.map(([chunk]) => String(chunk)))
      .join('');
    expect(logText).toContain(messageId); // the failed first attempt was logged
    expect(logText).not.toContain(TOKEN);
  });
});
