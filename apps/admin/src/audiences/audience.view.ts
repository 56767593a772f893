import type { AudienceEntity, AudienceSyncEntity } from '@app/settings';

/** An audience or computed trait as the API shows it. */
export interface AudienceView {
  readonly id: string;
  readonly sourceId: string;
  readonly name: string;
  /** The trait key its identifies carry. */
  readonly key: string;
  /** Members (users with a value) as of the last committed sync. */
  readonly memberCount: number;
  readonly lastSyncedAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A sync as the API shows it: members uploaded while open, what it changed once committed. */
export interface SyncView {
  readonly id: string;
  readonly audienceId: string;
  readonly status: 'open' | 'committed';
  readonly createdAt: string;
  /** Distinct members uploaded so far (open syncs). */
  readonly uploaded?: number;
  readonly committedAt?: string;
  readonly memberCount?: number;
  readonly joined?: number;
  readonly left?: number;
  readonly changed?: number;
  /** Identifies published (acknowledged by Kafka): joined + left + changed. */
  readonly identifies?: number;
}

export function audienceView(a: AudienceEntity): AudienceView {
  return {
    id: a.id,
    sourceId: a.sourceId,
    name: a.name,
    key: a.key,
    memberCount: a.memberCount,
    lastSyncedAt: a.lastSyncedAt?.toISOString() ?? null,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

export function syncView(s: AudienceSyncEntity, uploaded?: number): SyncView {
  const base = {
    id: s.id,
    audienceId: s.audienceId,
    status: s.status,
    createdAt: s.createdAt.toISOString(),
  };
  if (s.status === 'open') return { ...base, uploaded: uploaded ?? 0 };
  const joined = s.joinedCount ?? 0;
  const left = s.leftCount ?? 0;
  const changed = s.changedCount ?? 0;
  return {
    ...base,
    committedAt: s.committedAt?.toISOString(),
    memberCount: s.memberCount ?? 0,
    joined,
    left,
    changed,
    identifies: joined + left + changed,
  };
}
