import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { createSettingsDataSource } from '@app/settings';

import { DeletionsRepository } from '../../../apps/admin/src/deletions/deletions.repository';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const AT = new Date('2030-06-15T12:00:00.000Z');

/** Which destinations a delete reaches, and a request stored with its notifications. */
describe(DeletionsRepository.name, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let requests: DeletionsRepository;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    requests = new DeletionsRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function source(enabled: boolean): Promise<string> {
    const [row]: { id: string }[] = await dataSource.query(
      `INSERT INTO "source" ("name", "write_key", "enabled") VALUES ('s', $1, $2) RETURNING "id"`,
      [`key-${randomUUID()}`, enabled],
    );
    return row.id;
  }

  /** A destination, with a webhook when `hooked`, enabled when asked (after its webhook). */
  async function destination(sourceId: string, enabled: boolean, hooked: boolean) {
    const [row]: { id: string }[] = await dataSource.query(
      `INSERT INTO "destination" ("source_id", "kind", "name") VALUES ($1, 'webhooks', $2) RETURNING "id"`,
      [sourceId, randomUUID()],
    );
    if (hooked) {
      await dataSource.query(
        `INSERT INTO "webhook" ("destination_id", "position", "url") VALUES ($1, 0, 'https://x.test/')`,
        [row.id],
      );
    }
    if (enabled) {
      await dataSource.query(`UPDATE "destination" SET "enabled" = true WHERE "id" = $1`, [row.id]);
    }
    return row.id;
  }

  it('reaches enabled destinations with a webhook, of enabled sources', async () => {
    const on = await source(true);
    const off = await source(false);
    const reached = await destination(on, true, true);
    await destination(on, false, true);
    await destination(on, true, false);
    await destination(off, true, true);
    await expect(requests.affected([on, off])).resolves.toEqual([
      { source_id: on, destination_id: reached },
    ]);
    await expect(requests.affected([off])).resolves.toEqual([]);
  });

  it('answers which of the named sources exist', async () => {
    const id = await source(true);
    const missing = randomUUID();
    await expect(requests.existingSources([id, missing])).resolves.toEqual(new Set([id]));
  });

  it('stores a request with its notifications, counts receipts, and removes both', async () => {
    const sourceId = await source(true);
    const destinationId = await destination(sourceId, true, true);
    const notifications = ['u1', 'u2'].map((userId) => ({
      id: randomUUID(),
      sourceId,
      destinationId,
      userId,
    }));
    const request = await requests.insert(
      { userCount: 2, sourceIds: [sourceId], createdAt: AT },
      notifications,
    );
    expect(request.publishedAt).toBeNull();
    await expect(requests.notificationsOf(request.id)).resolves.toEqual(notifications);
    const [receipt] = await requests.receipts([request.id]);
    expect(receipt).toMatchObject({ request_id: request.id, pending: '2', delivered: '0' });
    await requests.remove(request.id);
    await expect(requests.findById(request.id)).resolves.toBeNull();
    await expect(requests.notificationsOf(request.id)).resolves.toEqual([]);
  });

  it('lists unpublished requests stored before the cutoff, oldest first, until marked', async () => {
    const older = await requests.insert(
      { userCount: 1, sourceIds: null, createdAt: new Date(AT.getTime() - 2_000) },
      [],
    );
    const newer = await requests.insert(
      { userCount: 1, sourceIds: null, createdAt: new Date(AT.getTime() - 1_000) },
      [],
    );
    const ids = async () => (await requests.unpublished(AT, 10)).map((r) => r.id);
    await expect(ids()).resolves.toEqual([older.id, newer.id]);
    await requests.markPublished(older.id, AT);
    await expect(ids()).resolves.toEqual([newer.id]);
  });

  it('applies concurrent outcomes of one notification one after the other', async () => {
    const sourceId = await source(true);
    const destinationId = await destination(sourceId, true, true);
    const id = randomUUID();
    await requests.insert({ userCount: 1, sourceIds: null, createdAt: AT }, [
      { id, sourceId, destinationId, userId: 'u1' },
    ]);
    const details = { reason: null, attempts: 1, outcomeAt: AT };
    const seen: string[] = [];
    const deliver = () =>
      requests.updateReceipt(
        id,
        (current) => {
          seen.push(current);
          return current === 'pending' ? 'delivered' : undefined;
        },
        details,
      );
    const effects = await Promise.all([deliver(), deliver(), deliver()]);
    expect(effects.sort()).toEqual(['recorded', 'unchanged', 'unchanged']);
    expect(seen.sort()).toEqual(['delivered', 'delivered', 'pending']);
    await expect(requests.updateReceipt(randomUUID(), () => 'failed', details)).resolves.toBe(
      'unknown',
    );
  });
});
