import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

import { AudienceEntity, AudienceKind, AudienceSyncEntity } from '@app/settings';

import { MemberDiff } from './member-diff';

/** The fields a new audience or computed trait is stored with. */
export type NewAudience = Pick<AudienceEntity, 'sourceId' | 'kind' | 'name' | 'key'>;

/** How a sync row is read: unlocked, shared (uploads side by side) or for update. */
export type SyncLock = 'share' | 'update' | false;

/** Members by user id: a committed list or an open sync's pages. */
export type Members = Map<string, unknown>;

/**
 * The audiences' and syncs' SQL. The locks live here (an audience's row while a sync
 * commits, a sync's row shared by uploads and taken by a commit or an abort); the rules that
 * need them live in `AudiencesService` and `SyncsService`.
 */
@Injectable()
export class AudiencesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Reads and writes outside a transaction, each statement on its own. */
  get direct(): AudiencesTransaction {
    return new AudiencesTransaction(this.dataSource.manager);
  }

  /** Runs `work` in one transaction. */
  transaction<T>(work: (tx: AudiencesTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((m) => work(new AudiencesTransaction(m)));
  }

  /** Stores it; a key the source already has fails with the unique constraint's error. */
  insert(fields: NewAudience): Promise<AudienceEntity> {
    const repo = this.dataSource.getRepository(AudienceEntity);
    return repo.save(repo.create(fields));
  }

  /** The source's audiences (or computed traits), oldest first. */
  list(sourceId: string, kind: AudienceKind): Promise<AudienceEntity[]> {
    return this.dataSource
      .getRepository(AudienceEntity)
      .find({ where: { sourceId, kind }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** Deletes it with its members and syncs (ON DELETE CASCADE). */
  async remove(id: string): Promise<void> {
    await this.dataSource.getRepository(AudienceEntity).delete({ id });
  }

  /** Opens a sync of the audience. */
  openSync(audienceId: string): Promise<AudienceSyncEntity> {
    const repo = this.dataSource.getRepository(AudienceSyncEntity);
    return repo.save(repo.create({ audienceId, status: 'open' }));
  }

  /** Deletes the syncs opened before `cutoff` and still open, with their pages; how many. */
  async expireOpen(cutoff: Date): Promise<number> {
    const [, dropped] = await this.dataSource.query<[unknown, number]>(
      `DELETE FROM "audience_sync" WHERE "status" = 'open' AND "created_at" < $1`,
      [cutoff],
    );
    return dropped;
  }
}

/** Reads and writes of audiences and syncs, in a transaction or not. */
export class AudiencesTransaction {
  constructor(private readonly m: EntityManager) {}

  /** The source's audience of that kind, locked for update when `lock`; null when none. */
  findAudience(
    sourceId: string,
    kind: AudienceKind,
    id: string,
    lock: boolean,
  ): Promise<AudienceEntity | null> {
    return this.m.findOne(AudienceEntity, {
      where: { id, sourceId, kind },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /** The audience's sync, read with `lock`; null when none. */
  findSync(audienceId: string, syncId: string, lock: SyncLock): Promise<AudienceSyncEntity | null> {
    return this.m.findOne(AudienceSyncEntity, {
      where: { id: syncId, audienceId },
      ...(lock
        ? { lock: { mode: lock === 'share' ? 'pessimistic_read' : 'pessimistic_write' } }
        : {}),
    });
  }

  /** Adds a page (`[{u, v}]` as JSON text); a user uploaded again keeps the last value. */
  async upload(syncId: string, entriesJson: string): Promise<void> {
    await this.m.query(
      `INSERT INTO "audience_sync_member" ("sync_id", "user_id", "value")
       SELECT $1, e->>'u', e->'v' FROM jsonb_array_elements($2::jsonb) AS e
       ON CONFLICT ("sync_id", "user_id") DO UPDATE SET "value" = EXCLUDED."value"`,
      [syncId, entriesJson],
    );
  }

  /** How many users an open sync holds. */
  async uploaded(syncId: string): Promise<number> {
    const [row]: { n: string }[] = await this.m.query(
      `SELECT count(*) AS n FROM "audience_sync_member" WHERE "sync_id" = $1`,
      [syncId],
    );
    return Number(row.n);
  }

  /** Deletes a sync with its pages. */
  async removeSync(syncId: string): Promise<void> {
    await this.m.delete(AudienceSyncEntity, { id: syncId });
  }

  /** The members of the audience's last committed list. */
  committedMembers(audienceId: string): Promise<Members> {
    return this.members('audience_member', 'audience_id', audienceId);
  }

  /** The members an open sync uploaded. */
  syncMembers(syncId: string): Promise<Members> {
    return this.members('audience_sync_member', 'sync_id', syncId);
  }

  /**
   * Stores the membership a sync committed, and its result: exactly the diff's changes, as
   * arrays (one parameter each, so the plan does not depend on table statistics; a set join
   * between the tables may be planned as a nested loop when statistics are stale).
   */
  async store(
    audience: AudienceEntity,
    sync: AudienceSyncEntity,
    diff: MemberDiff,
    size: number,
    at: Date,
  ): Promise<void> {
    const left = diff.changes.filter((c) => c.kind === 'left');
    const upserted = diff.changes.filter((c) => c.kind !== 'left');
    if (left.length > 0) {
      await this.m.query(
        `DELETE FROM "audience_member" WHERE "audience_id" = $1 AND "user_id" = ANY($2::text[])`,
        [audience.id, left.map((c) => c.userId)],
      );
    }
    if (upserted.length > 0) {
      await this.m.query(
        `INSERT INTO "audience_member" ("audience_id", "user_id", "value")
         SELECT $1, u.user_id, u.value::jsonb FROM unnest($2::text[], $3::text[]) AS u(user_id, value)
         ON CONFLICT ("audience_id", "user_id") DO UPDATE SET "value" = EXCLUDED."value"`,
        [audience.id, upserted.map((c) => c.userId), upserted.map((c) => JSON.stringify(c.value))],
      );
    }
    await this.m.query(`DELETE FROM "audience_sync_member" WHERE "sync_id" = $1`, [sync.id]);
    Object.assign(sync, {
      status: 'committed',
      committedAt: at,
      memberCount: size,
      joinedCount: diff.joined,
      leftCount: diff.left,
      changedCount: diff.changed,
    });
    await this.m.save(sync);
    await this.m.update(
      AudienceEntity,
      { id: audience.id },
      { memberCount: size, lastSyncedAt: at },
    );
  }

  private async members(
    table: 'audience_member' | 'audience_sync_member',
    column: 'audience_id' | 'sync_id',
    id: string,
  ): Promise<Members> {
    const rows: { user_id: string; value: unknown }[] = await this.m.query(
      `SELECT "user_id", "value" FROM "${table}" WHERE "${column}" = $1`,
      [id],
    );
    return new Map(rows.map((row) => [row.user_id, row.value]));
  }
}
