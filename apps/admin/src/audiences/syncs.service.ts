import { BadRequestException, Inject, Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { BatchProducer } from '@app/kafka';
import { AudienceEntity, AudienceKind, AudienceSyncEntity } from '@app/settings';

import { conflict, kafkaUnavailable, notFound } from '../admin.errors';
import { AdminMetrics } from '../admin.metrics';
import { Clock, CLOCK } from '../clock';
import { publishAll } from '../publish';
import { SyncView, syncView } from './audience.view';
import { AudiencesRepository, AudiencesTransaction, SyncLock } from './audiences.repository';
import { AudiencesService } from './audiences.service';
import { diffMembers, MemberDiff } from './member-diff';
import { traitIdentifyRecord } from './trait-identify';

/** Largest computed value, as JSON text, so that an identify stays far below the call limit. */
export const MAX_TRAIT_VALUE_BYTES = 8_192;

/** One member of an uploaded page: the user and its value (`true` for an audience). */
export interface UploadedMember {
  readonly userId: string;
  readonly value: unknown;
}

/**
 * Syncs of an audience's or computed trait's full member list: opened, filled with pages
 * (stored in `audience_sync_member`, so uploads survive a restart and can be repeated), then
 * committed. A commit runs in one transaction holding the audience's row lock: it diffs the
 * list against the last committed members, publishes only the changes and waits for Kafka's
 * acknowledgement of every one, and only then stores the new membership. A crash or a Kafka
 * failure rolls everything back and leaves the sync open: committing again sends the changes
 * again (duplicates at worst, never a lost change).
 */
@Injectable()
export class SyncsService {
  private readonly logger = new Logger(SyncsService.name);

  constructor(
    private readonly repository: AudiencesRepository,
    private readonly audiences: AudiencesService,
    private readonly producer: BatchProducer,
    private readonly metrics: AdminMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async open(sourceId: string, kind: AudienceKind, audienceId: string): Promise<SyncView> {
    const audience = await this.audiences.find(this.repository.direct, sourceId, kind, audienceId);
    return syncView(await this.repository.openSync(audience.id), 0);
  }

  async get(sourceId: string, kind: AudienceKind, audienceId: string, syncId: string) {
    return this.repository.transaction(async (tx) => {
      const sync = await this.findSync(tx, sourceId, kind, audienceId, syncId, false);
      return syncView(sync, sync.status === 'open' ? await tx.uploaded(sync.id) : undefined);
    });
  }

  /** Adds a page to an open sync; a user uploaded again keeps the last value. */
  async upload(
    sourceId: string,
    kind: AudienceKind,
    audienceId: string,
    syncId: string,
    members: readonly UploadedMember[],
  ): Promise<SyncView> {
    const page = new Map<string, unknown>();
    for (const { userId, value } of members) page.set(userId, value);
    const entries = [...page].map(([u, v]) => ({ u, v }));
    const text = JSON.stringify(entries);
    if (kind === 'computed_trait') ensureValueSizes(entries);
    return this.repository.transaction(async (tx) => {
      // A share lock: uploads run side by side, but wait for (and then see) a commit.
      const sync = await this.findSync(tx, sourceId, kind, audienceId, syncId, 'share');
      ensureOpen(sync);
      await tx.upload(sync.id, text);
      return syncView(sync, await tx.uploaded(sync.id));
    });
  }

  /**
   * Drops the syncs opened before `cutoff` and still open, with their pages: abandoned ones
   * would keep their pages for good. A sync being committed holds its row until the commit
   * ends, and is committed then, so it is never taken.
   * @returns how many were dropped
   */
  async expireOpen(cutoff: Date): Promise<number> {
    const dropped = await this.repository.expireOpen(cutoff);
    if (dropped > 0) {
      this.logger.warn(`${dropped} sync(s) opened before ${cutoff.toISOString()} expired`);
    }
    return dropped;
  }

  /** Drops an open sync and its pages. */
  async abort(sourceId: string, kind: AudienceKind, audienceId: string, syncId: string) {
    await this.repository.transaction(async (tx) => {
      const sync = await this.findSync(tx, sourceId, kind, audienceId, syncId, 'update');
      ensureOpen(sync);
      await tx.removeSync(sync.id);
    });
  }

  /**
   * Publishes what changed since the last committed sync and then stores the new membership
   * (see the class). Committing a committed sync again answers its result.
   */
  async commit(
    sourceId: string,
    kind: AudienceKind,
    audienceId: string,
    syncId: string,
  ): Promise<SyncView> {
    const stop = this.metrics.syncSeconds.startTimer({ kind });
    const result = await this.repository.transaction(async (tx) => {
      const audience = await this.audiences.find(tx, sourceId, kind, audienceId, true);
      const sync = await this.findSync(tx, sourceId, kind, audienceId, syncId, 'update');
      if (sync.status === 'committed') return { sync, diff: undefined };
      const readStart = this.clock.now();
      const previous = await tx.committedMembers(audience.id);
      const next = await tx.syncMembers(sync.id);
      const diff = diffMembers(kind, previous, next);
      const publishStart = this.clock.now();
      await this.publish(audience, diff);
      const storeStart = this.clock.now();
      await tx.store(audience, sync, diff, next.size, new Date(storeStart));
      const took = { read: publishStart - readStart, publish: storeStart - publishStart };
      return {
        sync,
        diff,
        size: next.size,
        took: { ...took, store: this.clock.now() - storeStart },
      };
    });
    if (result.diff) {
      stop();
      this.count(kind, result.diff, result.size ?? 0);
      const { read, publish, store: stored } = result.took ?? {};
      this.logger.log(
        `${kind} ${audienceId} sync ${syncId} committed: ${result.size} member(s), ${result.diff.joined} joined, ${result.diff.left} left, ${result.diff.changed} changed (read and diff ${read} ms, publish ${publish} ms, store ${stored} ms)`,
      );
    }
    return syncView(result.sync);
  }

  private async publish(audience: AudienceEntity, diff: MemberDiff): Promise<void> {
    const trait = {
      sourceId: audience.sourceId,
      audienceId: audience.id,
      kind: audience.kind,
      key: audience.key,
    };
    const stamp = { receivedAt: this.clock.now(), newMessageId: () => this.clock.newId() };
    const records = diff.changes.map((c) => traitIdentifyRecord(trait, c.userId, c.value, stamp));
    try {
      await publishAll(this.producer, records);
    } catch (error) {
      this.logger.warn(
        `${audience.kind} ${audience.id}: Kafka did not take ${records.length} identify(s), sync left open: ${String(error)}`,
      );
      throw kafkaUnavailable('the identifies');
    }
  }

  private count(kind: AudienceKind, diff: MemberDiff, size: number): void {
    this.metrics.syncs.inc({ kind });
    this.metrics.syncMembers.observe({ kind }, size);
    this.metrics.syncIdentifies.inc({ kind, change: 'joined' }, diff.joined);
    this.metrics.syncIdentifies.inc({ kind, change: 'left' }, diff.left);
    this.metrics.syncIdentifies.inc({ kind, change: 'changed' }, diff.changed);
  }

  private async findSync(
    tx: AudiencesTransaction,
    sourceId: string,
    kind: AudienceKind,
    audienceId: string,
    syncId: string,
    lock: SyncLock,
  ): Promise<AudienceSyncEntity> {
    const audience = await this.audiences.find(tx, sourceId, kind, audienceId);
    const sync = isUUID(syncId) ? await tx.findSync(audience.id, syncId, lock) : null;
    if (!sync) throw notFound('sync');
    return sync;
  }
}

function ensureOpen(sync: AudienceSyncEntity): void {
  if (sync.status !== 'open') {
    throw conflict('sync_committed', 'the sync is committed; open a new one');
  }
}

function ensureValueSizes(entries: readonly { u: string; v: unknown }[]): void {
  entries.forEach(({ u, v }) => {
    if (v === null || Buffer.byteLength(JSON.stringify(v)) > MAX_TRAIT_VALUE_BYTES) {
      throw new BadRequestException({
        code: 'invalid_request',
        message: `members: the value of ${JSON.stringify(u.slice(0, 64))} must be JSON other than null, of at most ${MAX_TRAIT_VALUE_BYTES} bytes`,
      });
    }
  });
}
