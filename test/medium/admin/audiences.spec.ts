import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { createSettingsDataSource } from '@app/settings';

import { AudiencesRepository } from '../../../apps/admin/src/audiences/audiences.repository';
import { AudiencesService } from '../../../apps/admin/src/audiences/audiences.service';
import { diffMembers } from '../../../apps/admin/src/audiences/member-diff';
import { SourcesRepository } from '../../../apps/admin/src/sources/sources.repository';
import { SourcesService } from '../../../apps/admin/src/sources/sources.service';
import { createMigratedTestDatabase, TestDatabase } from '../../helpers/test-database';

const AT = new Date('2030-06-15T12:00:00.000Z');

/** Page entries as a sync upload stores them. */
function page(members: Record<string, unknown>): string {
  return JSON.stringify(Object.entries(members).map(([u, v]) => ({ u, v })));
}

/**
 * The audiences' and syncs' SQL against PostgreSQL: unique trait keys, pages that keep a
 * user's last value, a commit that stores exactly the diff, the lock a commit takes, and the
 * expiry of abandoned syncs (no Kafka: the identifies a commit publishes are e2e's).
 */
describe(AudiencesRepository.name, () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let repository: AudiencesRepository;
  let audiences: AudiencesService;
  let sources: SourcesService;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 4 }).initialize();
    repository = new AudiencesRepository(dataSource);
    sources = new SourcesService(new SourcesRepository(dataSource));
    audiences = new AudiencesService(repository, sources);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function newAudience(kind: 'audience' | 'computed_trait' = 'audience') {
    const source = await sources.create({ name: `s ${randomUUID()}` });
    return { sourceId: source.id, audience: await audiences.create(source.id, kind, 'VIP Users') };
  }

  it('refuses a second audience or computed trait with the same key in a source', async () => {
    const { sourceId } = await newAudience();
    await expect(audiences.create(sourceId, 'computed_trait', 'vip users')).rejects.toMatchObject({
      response: { code: 'trait_key_exists' },
    });
    await expect(audiences.list(sourceId, 'computed_trait')).resolves.toEqual([]);
  });

  it('keeps the last value of a user uploaded twice, and counts the users', async () => {
    const { audience } = await newAudience('computed_trait');
    const sync = await repository.openSync(audience.id);
    await repository.direct.upload(sync.id, page({ u1: 1, u2: 2 }));
    await repository.direct.upload(sync.id, page({ u2: 3 }));
    await expect(repository.direct.syncMembers(sync.id)).resolves.toEqual(
      new Map<string, unknown>([
        ['u1', 1],
        ['u2', 3],
      ]),
    );
    await expect(repository.direct.uploaded(sync.id)).resolves.toBe(2);
  });

  it('stores exactly the diff on commit, drops the pages and marks the sync committed', async () => {
    const { sourceId, audience } = await newAudience();
    const first = await repository.openSync(audience.id);
    await repository.direct.upload(first.id, page({ a: true, b: true }));
    const commit = (syncId: string) =>
      repository.transaction(async (tx) => {
        const locked = await audiences.find(tx, sourceId, 'audience', audience.id, true);
        const sync = (await tx.findSync(locked.id, syncId, 'update'))!;
        const next = await tx.syncMembers(sync.id);
        const diff = diffMembers('audience', await tx.committedMembers(locked.id), next);
        await tx.store(locked, sync, diff, next.size, AT);
        return diff;
      });
    await expect(commit(first.id)).resolves.toMatchObject({ joined: 2, left: 0 });
    const second = await repository.openSync(audience.id);
    await repository.direct.upload(second.id, page({ b: true, c: true }));
    await expect(commit(second.id)).resolves.toMatchObject({ joined: 1, left: 1 });

    await expect(repository.direct.committedMembers(audience.id)).resolves.toEqual(
      new Map([
        ['b', true],
        ['c', true],
      ]),
    );
    await expect(repository.direct.uploaded(second.id)).resolves.toBe(0);
    const stored = await repository.direct.findSync(audience.id, second.id, false);
    expect(stored).toMatchObject({ status: 'committed', memberCount: 2, joinedCount: 1 });
    await expect(audiences.get(sourceId, 'audience', audience.id)).resolves.toMatchObject({
      memberCount: 2,
    });
  });

  it('makes an upload wait for a commit holding the sync, and then see it committed', async () => {
    const { sourceId, audience } = await newAudience();
    const sync = await repository.openSync(audience.id);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const nothing = { changes: [], joined: 0, left: 0, changed: 0 };
    const commit = repository.transaction(async (tx) => {
      const entity = await audiences.find(tx, sourceId, 'audience', audience.id, true);
      const taken = (await tx.findSync(entity.id, sync.id, 'update'))!;
      locked();
      await held;
      await tx.store(entity, taken, nothing, 0, AT);
      order.push('commit');
    });
    await isLocked;
    const upload = repository.transaction(async (tx) => {
      const seen = await tx.findSync(audience.id, sync.id, 'share');
      order.push(`upload saw ${seen?.status}`);
    });
    // The upload is blocked on the row lock while the commit holds it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(order).toEqual([]);
    release();
    await Promise.all([commit, upload]);
    expect(order).toEqual(['commit', 'upload saw committed']);
  });

  it('expires the syncs left open before the cutoff, with their pages', async () => {
    const { audience } = await newAudience();
    const old = await repository.openSync(audience.id);
    await repository.direct.upload(old.id, page({ a: true }));
    // Opened a day ago; the other tests' syncs were opened just now.
    await dataSource.query(
      `UPDATE "audience_sync" SET "created_at" = now() - interval '1 day' WHERE "id" = $1`,
      [old.id],
    );
    const recent = await repository.openSync(audience.id);
    const [{ cutoff }]: { cutoff: Date }[] = await dataSource.query(
      `SELECT now() - interval '1 hour' AS cutoff`,
    );
    await expect(repository.expireOpen(cutoff)).resolves.toBe(1);
    await expect(repository.direct.findSync(audience.id, old.id, false)).resolves.toBeNull();
    await expect(repository.direct.uploaded(old.id)).resolves.toBe(0);
    await expect(repository.direct.findSync(audience.id, recent.id, false)).resolves.not.toBeNull();
  });

  it('deletes an audience with its members and syncs', async () => {
    const { sourceId, audience } = await newAudience();
    const sync = await repository.openSync(audience.id);
    await audiences.remove(sourceId, 'audience', audience.id);
    await expect(repository.direct.findSync(audience.id, sync.id, false)).resolves.toBeNull();
    await expect(audiences.get(sourceId, 'audience', audience.id)).rejects.toMatchObject({
      response: { code: 'audience_not_found' },
    });
  });
});
