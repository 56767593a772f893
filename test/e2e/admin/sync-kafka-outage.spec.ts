import { HEADER, TOPIC } from '@app/contracts';
import { headerText, KafkaConnection } from '@app/kafka';

import { AdminHarness } from '../../helpers/admin-harness';
import { eventually } from '../../helpers/services';
import { SpareBroker } from '../../helpers/spare-broker';
import { json, TopicReader } from '../../helpers/topic-reader';

/**
 * A sync committed while Kafka is away: 503, the sync stays open and the stored membership
 * unchanged; committed again once Kafka is back, it sends the changes (duplicates at worst)
 * and only then stores them. The admin app runs against a broker of its own.
 */
describe('a sync committed (and a deletion requested) while Kafka is away', () => {
  const broker = new SpareBroker();
  const h = new AdminHarness();
  let reader: TopicReader | undefined;

  beforeAll(async () => {
    await broker.start();
    await h.start({ KAFKA_BROKERS: broker.brokers, ADMIN_PRODUCE_TIMEOUT_MS: '2000' });
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await h.close();
    await broker.destroy();
  }, 120_000);

  async function ok(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await h.call(method, `/admin/v1${path}`, body);
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }

  async function members(audienceId: string): Promise<string[]> {
    const rows = await h.sql<{ user_id: string }>(
      'SELECT user_id FROM audience_member WHERE audience_id = $1 ORDER BY user_id',
      [audienceId],
    );
    return rows.map((row) => row.user_id);
  }

  /** The latest value sent to each user, from the identifies on the calls topic. */
  function sent(): Map<string, unknown> {
    const latest = new Map<string, unknown>();
    for (const record of reader?.records ?? []) {
      // The refused deletion's delete may be on the topic too: a send that timed out may
      // still reach Kafka once it is back (at least once; its request was removed).
      if (headerText(record, HEADER.callType) !== 'identify') continue;
      const body = json(record);
      latest.set(body.userId as string, (body.traits as Record<string, unknown>).vip);
    }
    return latest;
  }

  it('answers 503, keeps the sync open and the membership, and sends the changes on a second commit; a deletion request answers 503 and stores nothing', async () => {
    const source = await ok('POST', '/sources', { name: 'shop' });
    const destination = `/sources/${source.id}/destination`;
    await ok('POST', destination, { name: 'hooks' });
    await ok('POST', `${destination}/webhooks`, { url: 'https://hooks.example.com/a' });
    await ok('POST', `${destination}/enable`);
    const audience = await ok('POST', `/sources/${source.id}/audiences`, { name: 'VIP' });
    const path = `/sources/${source.id}/audiences/${audience.id}`;
    const first = await ok('POST', `${path}/syncs`);
    await ok('POST', `${path}/syncs/${first.id}/members`, { userIds: ['u1', 'u2', 'u3'] });
    await ok('POST', `${path}/syncs/${first.id}/commit`);

    const second = await ok('POST', `${path}/syncs`);
    await ok('POST', `${path}/syncs/${second.id}/members`, { userIds: ['u1', 'u4'] });
    await broker.stop();
    const refused = await h.call('POST', `/admin/v1${path}/syncs/${second.id}/commit`);
    expect(refused).toMatchObject({ status: 503, body: { code: 'kafka_unavailable' } });
    await expect(ok('GET', `${path}/syncs/${second.id}`)).resolves.toMatchObject({
      status: 'open',
      uploaded: 2,
    });
    await expect(members(audience.id)).resolves.toEqual(['u1', 'u2', 'u3']);
    await expect(ok('GET', path)).resolves.toMatchObject({ memberCount: 3 });
    // A deletion request is refused the same way, and nothing of it is stored.
    const deletion = await h.call('POST', '/admin/v1/deletion-requests', { userIds: ['u1'] });
    expect(deletion).toMatchObject({ status: 503, body: { code: 'kafka_unavailable' } });
    await expect(h.sql('SELECT id FROM deletion_request')).resolves.toEqual([]);
    await expect(h.sql('SELECT id FROM deletion_notification')).resolves.toEqual([]);

    await broker.start();
    const committed = await eventually(
      async () => {
        const answer = await h.call('POST', `/admin/v1${path}/syncs/${second.id}/commit`);
        return answer.status === 200 ? (answer.body as Record<string, unknown>) : undefined;
      },
      60_000,
      'a commit Kafka acknowledges',
    );
    expect(committed).toMatchObject({ status: 'committed', joined: 1, left: 2, identifies: 3 });
    await expect(members(audience.id)).resolves.toEqual(['u1', 'u4']);

    reader = await new TopicReader(h.app.get(KafkaConnection), [TOPIC.calls]).start();
    const latest = await eventually(
      () => (sent().size === 4 && sent().get('u4') === true ? sent() : undefined),
      30_000,
      'the identifies of both syncs',
    );
    expect(Object.fromEntries(latest)).toEqual({ u1: true, u2: false, u3: false, u4: true });
  }, 240_000);
});
