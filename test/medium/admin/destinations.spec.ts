import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { MAX_DESTINATIONS_PER_SOURCE, MAX_WEBHOOKS_PER_DESTINATION } from '@app/contracts';
import { createSettingsDataSource } from '@app/settings';
import { SecretBox } from '@app/signing';

import { SYSTEM_CLOCK } from '../../../apps/admin/src/clock';
import { DestinationsRepository } from '../../../apps/admin/src/destinations/destinations.repository';
import { MASKED_HEADER_VALUE } from '../../../apps/admin/src/destinations/header-values';
import {
  DestinationRef,
  DestinationsService,
} from '../../../apps/admin/src/destinations/destinations.service';
import { SourcesRepository } from '../../../apps/admin/src/sources/sources.repository';
import { SourcesService } from '../../../apps/admin/src/sources/sources.service';
import { TEST_SECRETS_KEY } from '../../helpers/services';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

/** The stable code of an HTTP exception's answer, or the error's message. */
function codeOf(reason: unknown): string {
  const response = (reason as { getResponse?: () => { code?: string } }).getResponse?.();
  return response?.code ?? String(reason);
}

/** Counts of fulfilled calls and of each rejection's code. */
async function tally(calls: Promise<unknown>[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const result of await Promise.allSettled(calls)) {
    const key = result.status === 'fulfilled' ? 'ok' : codeOf(result.reason);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * The destinations' rules that hold through row locks and constraints, run against
 * PostgreSQL with concurrent requests (no Kafka, no HTTP).
 */
describe(DestinationsService.name, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let sources: SourcesService;
  let destinations: DestinationsService;
  const box = new SecretBox(TEST_SECRETS_KEY);

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 8 }).initialize();
    sources = new SourcesService(new SourcesRepository(dataSource));
    destinations = new DestinationsService(
      new DestinationsRepository(dataSource),
      sources,
      box,
      SYSTEM_CLOCK,
      { defaultOverlapSeconds: 86_400 },
    );
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function newSource(): Promise<string> {
    return (await sources.create({ name: `web ${randomUUID()}` })).id;
  }

  async function count(table: 'destination' | 'webhook', column: string, id: string) {
    const [row]: { n: string }[] = await dataSource.query(
      `SELECT count(*) AS n FROM "${table}" WHERE "${column}" = $1`,
      [id],
    );
    return Number(row.n);
  }

  it('creates at most 20 destinations per source under concurrent creates', async () => {
    const sourceId = await newSource();
    const creates = Array.from({ length: MAX_DESTINATIONS_PER_SOURCE + 5 }, (_, i) =>
      destinations.create(sourceId, { name: `d${i}` }),
    );
    await expect(tally(creates)).resolves.toEqual({
      ok: MAX_DESTINATIONS_PER_SOURCE,
      too_many_destinations: 5,
    });
    await expect(count('destination', 'source_id', sourceId)).resolves.toBe(
      MAX_DESTINATIONS_PER_SOURCE,
    );
  });

  it('gives a name to one of concurrent creates, 409 to the others', async () => {
    const sourceId = await newSource();
    const creates = Array.from({ length: 4 }, () => destinations.create(sourceId, { name: 'crm' }));
    await expect(tally(creates)).resolves.toEqual({ ok: 1, destination_name_taken: 3 });
    await expect(count('destination', 'source_id', sourceId)).resolves.toBe(1);
  });

  it('refuses a rename to a taken name and keeps the old name', async () => {
    const sourceId = await newSource();
    await destinations.create(sourceId, { name: 'a' });
    const b = await destinations.create(sourceId, { name: 'b' });
    const ref = { sourceId, destinationId: b.id };
    await expect(destinations.update(ref, { name: 'a' })).rejects.toMatchObject({
      response: { code: 'destination_name_taken' },
    });
    await expect(destinations.get(ref)).resolves.toMatchObject({ name: 'b' });
  });

  it('lets the same name be used by another source', async () => {
    const [one, two] = [await newSource(), await newSource()];
    await destinations.create(one, { name: 'crm' });
    await expect(destinations.create(two, { name: 'crm' })).resolves.toMatchObject({
      name: 'crm',
    });
  });

  it('refuses a second destination on the older single-destination route', async () => {
    const sourceId = await newSource();
    await destinations.create(sourceId, { name: 'first' }, true);
    await expect(destinations.create(sourceId, { name: 'second' }, true)).rejects.toMatchObject({
      response: { code: 'destination_exists' },
    });
  });

  it('has the database refuse a 21st destination written past the service', async () => {
    const sourceId = await newSource();
    for (let i = 0; i < MAX_DESTINATIONS_PER_SOURCE; i++) {
      await destinations.create(sourceId, { name: `d${i}` });
    }
    await expect(
      dataSource.query(
        `INSERT INTO "destination" ("source_id", "kind", "name") VALUES ($1, 'webhooks', 'extra')`,
        [sourceId],
      ),
    ).rejects.toThrow(/destination_slot/);
  });

  it('adds at most 5 webhooks to a destination under concurrent adds, positions 0..4', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'hooks' });
    const ref: DestinationRef = { sourceId, destinationId: id };
    const adds = Array.from({ length: MAX_WEBHOOKS_PER_DESTINATION + 3 }, (_, i) =>
      destinations.addWebhook(ref, { url: `https://example.com/${i}` }),
    );
    await expect(tally(adds)).resolves.toEqual({
      ok: MAX_WEBHOOKS_PER_DESTINATION,
      too_many_webhooks: 3,
    });
    const positions: { position: number }[] = await dataSource.query(
      `SELECT "position" FROM "webhook" WHERE "destination_id" = $1 ORDER BY 1`,
      [id],
    );
    expect(positions.map((p) => p.position)).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps the last webhook of an enabled destination under concurrent removals', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'kept' });
    const ref: DestinationRef = { sourceId, destinationId: id };
    const hooks = [
      await destinations.addWebhook(ref, { url: 'https://example.com/a' }),
      await destinations.addWebhook(ref, { url: 'https://example.com/b' }),
    ];
    await destinations.setEnabled(ref, true);
    const removals = hooks.map((hook) => destinations.removeWebhook(ref, hook.id));
    await expect(tally(removals)).resolves.toEqual({ ok: 1, last_webhook: 1 });
    const [left] = (await destinations.get(ref)).webhooks;
    expect(left.position).toBe(0);
  });

  it('reorders webhooks in one replace (the position constraint is checked at commit)', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'order' });
    const ref: DestinationRef = { sourceId, destinationId: id };
    const a = await destinations.addWebhook(ref, { url: 'https://example.com/a' });
    const b = await destinations.addWebhook(ref, { url: 'https://example.com/b' });
    const replaced = await destinations.replaceWebhooks(ref, [
      { id: b.id, url: b.url },
      { id: a.id, url: a.url },
    ]);
    expect(replaced.webhooks.map((w) => [w.id, w.position])).toEqual([
      [b.id, 0],
      [a.id, 1],
    ]);
  });

  it('answers 404 for a destination of another source, and stores nothing', async () => {
    const [one, two] = [await newSource(), await newSource()];
    const { id } = await destinations.create(one, { name: 'mine' });
    await expect(
      destinations.addWebhook({ sourceId: two, destinationId: id }, { url: 'https://x.test/' }),
    ).rejects.toMatchObject({ response: { code: 'destination_not_found' } });
    await expect(count('webhook', 'destination_id', id)).resolves.toBe(0);
  });

  it('deletes a source with its destinations, webhooks, usage and audiences', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'gone' });
    await destinations.addWebhook({ sourceId, destinationId: id }, { url: 'https://x.test/' });
    await dataSource.query(
      `INSERT INTO "source_usage" ("source_id", "day", "calls") VALUES ($1, '2030-01-01', 3)`,
      [sourceId],
    );
    await dataSource.query(
      `INSERT INTO "audience" ("source_id", "kind", "name", "key") VALUES ($1, 'audience', 'VIP', 'vip')`,
      [sourceId],
    );
    await sources.remove(sourceId);
    const left: { n: string }[] = await dataSource.query(
      `SELECT (SELECT count(*) FROM "destination" WHERE "source_id" = $1)
            + (SELECT count(*) FROM "webhook" WHERE "destination_id" = $2)
            + (SELECT count(*) FROM "source_usage" WHERE "source_id" = $1)
            + (SELECT count(*) FROM "audience" WHERE "source_id" = $1) AS n`,
      [sourceId, id],
    );
    expect(Number(left[0].n)).toBe(0);
    await expect(sources.remove(sourceId)).rejects.toMatchObject({
      response: { code: 'source_not_found' },
    });
  });

  it('stores static header values sealed, shows them masked, and keeps a value sent back masked', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'headers' });
    const ref: DestinationRef = { sourceId, destinationId: id };
    const hook = await destinations.addWebhook(ref, {
      url: 'https://x.test/',
      headers: { Authorization: 'Bearer t0ken', 'X-Team': 'data' },
    });
    expect(hook.headers).toEqual({
      Authorization: MASKED_HEADER_VALUE,
      'X-Team': MASKED_HEADER_VALUE,
    });
    const storedHeaders = async () => {
      const [row]: { headers: Record<string, string> }[] = await dataSource.query(
        'SELECT "headers" FROM "webhook" WHERE "id" = $1',
        [hook.id],
      );
      return row.headers;
    };
    const sealed = await storedHeaders();
    expect(JSON.stringify(sealed)).not.toContain('t0ken');
    expect(box.openText(sealed.Authorization)).toBe('Bearer t0ken');

    // What GET answers, sent back: the values stay; a new value replaces its own only.
    await destinations.updateWebhook(ref, hook.id, {
      headers: { authorization: MASKED_HEADER_VALUE, 'X-Team': 'ops' },
    });
    const edited = await storedHeaders();
    expect(box.openText(edited.authorization)).toBe('Bearer t0ken');
    expect(box.openText(edited['X-Team'])).toBe('ops');
    await destinations.replaceWebhooks(ref, [
      { id: hook.id, url: 'https://x.test/', headers: { authorization: MASKED_HEADER_VALUE } },
    ]);
    expect(box.openText((await storedHeaders()).authorization)).toBe('Bearer t0ken');

    // A masked value with nothing stored under its name is refused, and nothing is stored.
    await expect(
      destinations.addWebhook(ref, {
        url: 'https://y.test/',
        headers: { Authorization: MASKED_HEADER_VALUE },
      }),
    ).rejects.toMatchObject({ response: { code: 'invalid_request' } });
    await expect(count('webhook', 'destination_id', id)).resolves.toBe(1);
  });

  it('deletes a destination with its webhooks', async () => {
    const sourceId = await newSource();
    const { id } = await destinations.create(sourceId, { name: 'short-lived' });
    const ref: DestinationRef = { sourceId, destinationId: id };
    await destinations.addWebhook(ref, { url: 'https://x.test/' });
    await destinations.remove(ref);
    await expect(count('webhook', 'destination_id', id)).resolves.toBe(0);
  });
});
