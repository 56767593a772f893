import { HEADER, TOPIC } from '@app/contracts';
import { headerText } from '@app/kafka';

import { Housekeeping } from '../../../apps/admin/src/housekeeping';
import { PipelineHarness, PipelineSource } from '../../helpers/pipeline-harness';
import { eventually } from '../../helpers/services';
import { json } from '../../helpers/topic-reader';

/**
 * Audiences and computed traits through the admin API, with their identifies routed by the
 * real router: what reaches sluice.deliveries.v1 for the source's destination is checked
 * once the router has routed everything (so a missing identify was never published).
 */
const h = new PipelineHarness();
beforeAll(() => h.start(), 60_000);
afterAll(() => h.close());

/** Identify deliveries to a destination so far: user id and the trait's value. */
function identifies(source: PipelineSource, key: string): Map<string, unknown>[] {
  return h.deliveries
    .withHeader(TOPIC.deliveries, HEADER.destinationId, source.destinationId!)
    .filter((d) => headerText(d, HEADER.callType) === 'identify')
    .map((d) => {
      const body = json(d);
      const traits = body.traits as Record<string, unknown>;
      return new Map([[body.userId as string, traits[key]]]);
    });
}

/** The deliveries since `seen`, as userId -> value (each user at most once). */
async function newIdentifies(
  source: PipelineSource,
  key: string,
  seen: number,
): Promise<Record<string, unknown>> {
  await h.settled();
  const all = identifies(source, key).slice(seen);
  const result: Record<string, unknown> = {};
  for (const entry of all) {
    for (const [userId, value] of entry) {
      expect(result).not.toHaveProperty([userId]);
      result[userId] = value;
    }
  }
  return result;
}

/** Opens a sync, uploads the pages, commits; returns the commit's answer. */
async function sync(path: string, pages: readonly unknown[]): Promise<any> {
  const opened = await h.apiOk('POST', `${path}/syncs`);
  expect(opened).toMatchObject({ status: 'open', uploaded: 0 });
  for (const page of pages) await h.apiOk('POST', `${path}/syncs/${opened.id}/members`, page);
  return h.apiOk('POST', `${path}/syncs/${opened.id}/commit`);
}

const ids = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `user-${from + i}`);
const pagesOf = (userIds: string[], size: number) =>
  Array.from({ length: Math.ceil(userIds.length / size) }, (_, i) => ({
    userIds: userIds.slice(i * size, (i + 1) * size),
  }));

describe('an audience', () => {
  let source: PipelineSource;
  let path: string;
  const key = 'first_time_shopper';

  beforeAll(async () => {
    source = await h.apiSource();
    const created = await h.api('POST', `/sources/${source.id}/audiences`, {
      name: 'First Time Shopper',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key, name: 'First Time Shopper', memberCount: 0 });
    path = `/sources/${source.id}/audiences/${created.body.id}`;
  });

  it('sends true to every member on its first sync, in the shape of an ingested identify', async () => {
    const members = ids(0, 250);
    const committed = await sync(path, pagesOf(members, 100));
    expect(committed).toMatchObject({
      status: 'committed',
      memberCount: 250,
      joined: 250,
      left: 0,
      changed: 0,
      identifies: 250,
    });
    const sent = await newIdentifies(source, key, 0);
    expect(Object.keys(sent).sort()).toEqual([...members].sort());
    expect(new Set(Object.values(sent))).toEqual(new Set([true]));

    const [delivery] = h.deliveries
      .withHeader(TOPIC.deliveries, HEADER.destinationId, source.destinationId!)
      .filter((d) => json(d).userId === 'user-7');
    const body = json(delivery);
    expect(body).toEqual({
      version: 1,
      type: 'identify',
      messageId: headerText(delivery, HEADER.messageId),
      timestamp: expect.stringMatching(/Z$/),
      receivedAt: body.timestamp,
      userId: 'user-7',
      traits: { [key]: true },
      context: {
        personas: {
          computation_class: 'audience',
          computation_key: key,
          computation_id: path.split('/').pop(),
        },
      },
    });
    expect(delivery.key?.toString()).toBe(`${source.destinationId}:user-7`);
    const call = await h.callRecord(headerText(delivery, HEADER.messageId)!);
    expect(call.key?.toString()).toBe(`${source.id}:user-7`);
    expect(headerText(call, HEADER.integrations)).toBe('{"Webhooks":true}');
    await expect(h.apiOk('GET', path)).resolves.toMatchObject({
      memberCount: 250,
      lastSyncedAt: expect.any(String),
    });
  });

  it('sends true only to users who joined and false only to users who left', async () => {
    const seen = identifies(source, key).length;
    // users 0..19 leave, 250..279 join; the rest stay.
    const members = ids(20, 280).reverse();
    const committed = await sync(path, pagesOf(members, 77));
    expect(committed).toMatchObject({ memberCount: 260, joined: 30, left: 20, identifies: 50 });
    const sent = await newIdentifies(source, key, seen);
    expect(sent).toEqual({
      ...Object.fromEntries(ids(0, 20).map((id) => [id, false])),
      ...Object.fromEntries(ids(250, 280).map((id) => [id, true])),
    });
  });

  it('sends nothing for the same list again, whatever the pages', async () => {
    const seen = identifies(source, key).length;
    const members = ids(20, 280);
    // Uploading a page twice changes nothing either.
    const committed = await sync(path, [...pagesOf(members, 60), pagesOf(members, 60)[0]]);
    expect(committed).toMatchObject({ memberCount: 260, joined: 0, left: 0, identifies: 0 });
    await expect(newIdentifies(source, key, seen)).resolves.toEqual({});
  });

  it('answers a second commit with the first one’s result, sending nothing more', async () => {
    const seen = identifies(source, key).length;
    const opened = await h.apiOk('POST', `${path}/syncs`);
    await h.apiOk('POST', `${path}/syncs/${opened.id}/members`, { userIds: ['user-20'] });
    const first = await h.apiOk('POST', `${path}/syncs/${opened.id}/commit`);
    const again = await h.apiOk('POST', `${path}/syncs/${opened.id}/commit`);
    expect(again).toEqual(first);
    expect(first).toMatchObject({ memberCount: 1, left: 259 });
    expect(Object.keys(await newIdentifies(source, key, seen))).toHaveLength(259);
    const late = await h.api('POST', `${path}/syncs/${opened.id}/members`, { userIds: ['x'] });
    expect(late).toMatchObject({ status: 409, body: { code: 'sync_committed' } });
  });

  it('can abandon an open sync', async () => {
    const opened = await h.apiOk('POST', `${path}/syncs`);
    await h.apiOk('POST', `${path}/syncs/${opened.id}/members`, { userIds: ['a', 'b', 'a'] });
    await expect(h.apiOk('GET', `${path}/syncs/${opened.id}`)).resolves.toMatchObject({
      status: 'open',
      uploaded: 2,
    });
    expect((await h.api('DELETE', `${path}/syncs/${opened.id}`)).status).toBe(204);
    const gone = await h.api('GET', `${path}/syncs/${opened.id}`);
    expect(gone).toMatchObject({ status: 404, body: { code: 'sync_not_found' } });
  });

  it('drops a sync left open for a day with its pages, and no other sync', async () => {
    const opened = async (userIds: string[]) => {
      const sync = await h.apiOk('POST', `${path}/syncs`);
      await h.apiOk('POST', `${path}/syncs/${sync.id}/members`, { userIds });
      return sync.id as string;
    };
    const abandoned = await opened(['old-1', 'old-2']);
    const recent = await opened(['new-1']);
    const committed = await opened(['user-20']);
    await h.apiOk('POST', `${path}/syncs/${committed}/commit`);
    await h.sql(
      `UPDATE audience_sync SET created_at = now() - interval '25 hours' WHERE id = ANY($1::uuid[])`,
      [[abandoned, committed]],
    );

    const housekeeping = h.adminApp.get(Housekeeping);
    // A round the app's timer began before the update may answer the first call.
    const gone = await eventually(
      async () => {
        await housekeeping.run();
        const answer = await h.api('GET', `${path}/syncs/${abandoned}`);
        return answer.status === 404 ? answer : undefined;
      },
      15_000,
      'a round that drops the abandoned sync',
    );
    expect(gone.body).toMatchObject({ code: 'sync_not_found' });
    await expect(
      h.sql('SELECT user_id FROM audience_sync_member WHERE sync_id = $1', [abandoned]),
    ).resolves.toEqual([]);
    await expect(h.apiOk('GET', `${path}/syncs/${recent}`)).resolves.toMatchObject({
      status: 'open',
      uploaded: 1,
    });
    await expect(h.apiOk('GET', `${path}/syncs/${committed}`)).resolves.toMatchObject({
      status: 'committed',
    });
    await expect(housekeeping.run()).resolves.toMatchObject({ expiredSyncs: 0 });
    await h.api('DELETE', `${path}/syncs/${recent}`);
  });
});

describe('a computed trait', () => {
  it('sends only new and changed values, and null once a user is no longer listed', async () => {
    const source = await h.apiSource();
    const created = await h.apiOk('POST', `/sources/${source.id}/computed-traits`, {
      name: 'Lifetime Value (€)',
    });
    expect(created.key).toBe('lifetime_value');
    const path = `/sources/${source.id}/computed-traits/${created.id}`;
    const key = 'lifetime_value';

    const first = await sync(path, [
      {
        members: [
          { userId: 'a', value: 10 },
          { userId: 'b', value: 'gold' },
          { userId: 'c', value: { tier: 1, tags: ['x'] } },
          { userId: 'd', value: true },
        ],
      },
    ]);
    expect(first).toMatchObject({ memberCount: 4, joined: 4, changed: 0, left: 0 });
    await expect(newIdentifies(source, key, 0)).resolves.toEqual({
      a: 10,
      b: 'gold',
      c: { tier: 1, tags: ['x'] },
      d: true,
    });

    const second = await sync(path, [
      {
        members: [
          { userId: 'a', value: 10 },
          { userId: 'b', value: 'silver' },
          { userId: 'c', value: { tags: ['x'], tier: 1 } },
        ],
      },
      { members: [{ userId: 'e', value: 0 }] },
    ]);
    expect(second).toMatchObject({ memberCount: 4, joined: 1, changed: 1, left: 1 });
    await expect(newIdentifies(source, key, 4)).resolves.toEqual({ b: 'silver', d: null, e: 0 });

    // The new values were stored: the same values again send nothing.
    const third = await sync(path, [
      {
        members: [
          { userId: 'e', value: 0 },
          { userId: 'c', value: { tier: 1, tags: ['x'] } },
          { userId: 'b', value: 'silver' },
          { userId: 'a', value: 10 },
        ],
      },
    ]);
    expect(third).toMatchObject({ memberCount: 4, joined: 0, changed: 0, left: 0 });
    await expect(newIdentifies(source, key, 7)).resolves.toEqual({});
  });
});

describe('the OpenAPI document and the metrics', () => {
  it('describe the paged sync and count syncs and their sizes', async () => {
    const doc = (await (await fetch(`${h.adminUrl}/admin/v1/openapi.json`)).json()) as {
      info: { description: string };
      paths: Record<string, unknown>;
    };
    expect(doc.info.description).toContain('Syncs are paged');
    for (const kind of ['audiences', 'computed-traits']) {
      const base = `/admin/v1/sources/{sourceId}/${kind}/{audienceId}/syncs/{syncId}`;
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([`${base}/members`, `${base}/commit`]),
      );
    }
    expect(Object.keys(doc.paths)).toContain('/admin/v1/deletion-requests/{requestId}');
    const text = await (await fetch(`${h.adminUrl}/metrics`)).text();
    expect(text).toMatch(/sluice_admin_syncs_total\{[^}]*kind="audience"[^}]*\} [1-9]/);
    expect(text).toMatch(/sluice_admin_sync_members_count\{[^}]*kind="computed_trait"/);
    expect(text).toMatch(
      /sluice_admin_sync_identifies_published_total\{[^}]*change="joined"[^}]*\} [1-9]/,
    );
  });
});

describe('bad input', () => {
  let source: PipelineSource;
  let audiencePath: string;

  beforeAll(async () => {
    source = await h.apiSource({ destination: 'none' });
    const created = await h.apiOk('POST', `/sources/${source.id}/audiences`, { name: 'VIP' });
    audiencePath = `/sources/${source.id}/audiences/${created.id}`;
  });

  it('refuses a name that turns into an empty key', async () => {
    for (const name of ['!!!', 'Кошки', '  ']) {
      const answer = await h.api('POST', `/sources/${source.id}/audiences`, { name });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        code: 'invalid_request',
        message: expect.stringMatching(/^name: .*Latin letter or a digit/),
      });
    }
    const empty = await h.api('POST', `/sources/${source.id}/computed-traits`, { name: '' });
    expect(empty).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it('refuses a duplicate key on one source, across audiences and computed traits, with 409', async () => {
    for (const [kind, name] of [
      ['audiences', 'vip'],
      ['audiences', ' V.I.P '],
      ['computed-traits', 'Vip'],
    ]) {
      const answer = await h.api('POST', `/sources/${source.id}/${kind}`, { name });
      if (name === ' V.I.P ') {
        expect(answer.body.key).toBe('v_i_p');
        continue;
      }
      expect(answer).toMatchObject({ status: 409, body: { code: 'trait_key_exists' } });
    }
    const other = await h.apiSource({ destination: 'none' });
    const elsewhere = await h.api('POST', `/sources/${other.id}/audiences`, { name: 'VIP' });
    expect(elsewhere).toMatchObject({ status: 201, body: { key: 'vip' } });
  });

  it('answers 404 for unknown sources, audiences and syncs', async () => {
    const nobody = '00000000-0000-4000-8000-000000000009';
    const cases: [string, string, string][] = [
      ['POST', `/sources/${nobody}/audiences`, 'source_not_found'],
      ['GET', `/sources/${nobody}/computed-traits`, 'source_not_found'],
      ['GET', `/sources/${source.id}/audiences/${nobody}`, 'audience_not_found'],
      ['POST', `/sources/${source.id}/audiences/not-a-uuid/syncs`, 'audience_not_found'],
      ['GET', `/sources/${source.id}/computed-traits/${nobody}`, 'computed_trait_not_found'],
      ['POST', `${audiencePath}/syncs/${nobody}/commit`, 'sync_not_found'],
    ];
    for (const [method, path, code] of cases) {
      const answer = await h.api(method, path, method === 'POST' ? { name: 'x' } : undefined);
      expect({ path, status: answer.status, code: answer.body?.code }).toEqual({
        path,
        status: 404,
        code,
      });
    }
    // An audience is not a computed trait.
    const asTrait = await h.api('GET', audiencePath.replace('/audiences/', '/computed-traits/'));
    expect(asTrait).toMatchObject({ status: 404, body: { code: 'computed_trait_not_found' } });
  });

  it('refuses empty, oversize and malformed pages', async () => {
    const opened = await h.apiOk('POST', `${audiencePath}/syncs`);
    const members = `${audiencePath}/syncs/${opened.id}/members`;
    const cases: [unknown, RegExp][] = [
      [{ userIds: [] }, /userIds: .*at least 1/],
      [{ userIds: ids(0, 10_001) }, /userIds: .*no more than 10000/],
      [{ userIds: [''] }, /userIds/],
      [{ userIds: [5] }, /userIds/],
      [{ members: [{ userId: 'a', value: 1 }] }, /members/],
    ];
    for (const [body, message] of cases) {
      const answer = await h.api('POST', members, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        code: 'invalid_request',
        message: expect.stringMatching(message),
      });
    }
    await expect(h.apiOk('GET', `${audiencePath}/syncs/${opened.id}`)).resolves.toMatchObject({
      uploaded: 0,
    });
  });

  it('refuses computed values that are null, missing or too large', async () => {
    const trait = await h.apiOk('POST', `/sources/${source.id}/computed-traits`, { name: 'Score' });
    const path = `/sources/${source.id}/computed-traits/${trait.id}`;
    const opened = await h.apiOk('POST', `${path}/syncs`);
    const members = `${path}/syncs/${opened.id}/members`;
    for (const member of [
      { userId: 'a', value: null },
      { userId: 'a' },
      { userId: 'a', value: 'x'.repeat(9_000) },
    ]) {
      const answer = await h.api('POST', members, { members: [member] });
      expect(answer).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    }
  });
});
