import {
  BATCH_LIMITS,
  type CompiledFilter,
  compileFilter,
  DEFAULT_SIGNATURE_MODE,
  type SignatureMode,
  validateFilter,
} from '@app/contracts';

import type { DestinationEntity, DestinationKind } from './entities/destination.entity';
import type { SourceEntity } from './entities/source.entity';
import type { WebhookEntity } from './entities/webhook.entity';

/** A source as readers see it. The write key is deliberately absent: it is only a lookup key. */
export interface SourceSettings {
  /** Source id (uuid). */
  readonly id: string;
  /** Human-readable name. */
  readonly name: string;
  /** A disabled source's calls are refused at ingest. */
  readonly enabled: boolean;
  /** Browser origins allowed to use the write key; empty allows every origin. */
  readonly allowedOrigins: readonly string[];
}

/** One webhook of a destination as readers see it. */
export interface WebhookSettings {
  /** Webhook id (uuid); stable while the entry is edited in place. */
  readonly id: string;
  /** 0-based place in the destination's list. */
  readonly position: number;
  /** Absolute http or https URL. */
  readonly url: string;
  /** Static headers, at most 5; each value sealed (`SecretBox.sealText`), as stored. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A destination with its webhooks as readers see it. */
export interface DestinationSettings {
  /** Destination id (uuid). */
  readonly id: string;
  /** The source it belongs to. */
  readonly sourceId: string;
  /** Always `webhooks` for now. */
  readonly kind: DestinationKind;
  /** Human-readable name. */
  readonly name: string;
  /** Deliveries are produced and sent only while enabled. */
  readonly enabled: boolean;
  /**
   * Authenticated-cipher ciphertext of the shared secret, opaque bytes (never plaintext), or
   * null. A private copy: readers must not modify it, and must never log it.
   */
  readonly sharedSecretCiphertext: Readonly<Uint8Array> | null;
  /** Webhooks ordered by position. */
  readonly webhooks: readonly WebhookSettings[];
  /**
   * Which calls it takes, compiled once per settings change; null (or absent, in hand-made
   * settings) takes every call. A stored filter that no longer validates compiles to one that
   * takes no call.
   */
  readonly filter?: CompiledFilter | null;
  /**
   * Deliveries a second at most, across all dispatcher replicas together; null (or absent, in
   * hand-made settings) is unlimited.
   */
  readonly rateLimitPerSecond?: number | null;
  /** How its requests are signed; absent (in hand-made settings) is `x-signature`. */
  readonly signatureMode?: SignatureMode;
  /**
   * Ciphertext of a rotation's previous secret, or null (absent in hand-made settings): it
   * signs beside the current one until `previousSecretExpiresAt`. Never logged.
   */
  readonly previousSecretCiphertext?: Readonly<Uint8Array> | null;
  /** When the previous secret stops signing, epoch milliseconds; null without one. */
  readonly previousSecretExpiresAt?: number | null;
  /**
   * Batched delivery's bounds; null (or absent, in hand-made settings) sends one call a
   * request.
   */
  readonly batching?: BatchSettings | null;
  /**
   * Ordered delivery's bounds; null (or absent, in hand-made settings) delivers without
   * ordering.
   */
  readonly ordering?: OrderingSettings | null;
  /** Its webhook POSTs carry a `traceparent` when traces are on (absent: they do not). */
  readonly sendTraceparent?: boolean;
}

/** A batching destination's bounds (docs/api.md, "Batched delivery"). */
export interface BatchSettings {
  /** Most calls in one request. */
  readonly maxCalls: number;
  /** Most bytes of one request's body (a single larger call still goes, alone). */
  readonly maxBytes: number;
  /** Longest the first call of a batch waits for the batch to fill, in ms. */
  readonly maxWaitMs: number;
}

/** An ordered destination's bounds (docs/api.md, "Ordered delivery"). */
export interface OrderingSettings {
  /** Most calls of one user waiting behind its retrying call before its ordering is suspended. */
  readonly maxPendingCalls: number;
  /** Longest its retrying call holds them, in seconds, before its ordering is suspended. */
  readonly maxHoldSeconds: number;
}

/** The columns the cache loads, one array per table. */
export interface SettingsRows {
  /** Every source. */
  readonly sources: readonly Pick<
    SourceEntity,
    'id' | 'name' | 'writeKey' | 'enabled' | 'allowedOrigins'
  >[];
  /** Every destination. */
  readonly destinations: readonly (Pick<
    DestinationEntity,
    | 'id'
    | 'sourceId'
    | 'kind'
    | 'name'
    | 'enabled'
    | 'sharedSecretCiphertext'
    | 'filter'
    | 'rateLimitPerSecond'
    | 'batchMaxCalls'
    | 'batchMaxBytes'
    | 'batchMaxWaitMs'
    | 'sendTraceparent'
    | 'createdAt'
  > &
    Partial<
      Pick<
        DestinationEntity,
        | 'signatureMode'
        | 'previousSecretCiphertext'
        | 'previousSecretExpiresAt'
        | 'orderingMaxPendingCalls'
        | 'orderingMaxHoldSeconds'
      >
    >)[];
  /** Every webhook, in any order. */
  readonly webhooks: readonly Pick<
    WebhookEntity,
    'id' | 'destinationId' | 'position' | 'url' | 'headers'
  >[];
}

/** An immutable, indexed view of every setting at one moment. */
export interface SettingsSnapshot {
  /** Sources by id. */
  readonly sources: ReadonlyMap<string, SourceSettings>;
  /** Sources by write key (see `SettingsCache.sourceByWriteKey` on timing). */
  readonly sourcesByWriteKey: ReadonlyMap<string, SourceSettings>;
  /** Destinations by id. */
  readonly destinations: ReadonlyMap<string, DestinationSettings>;
  /** Destinations by source id, oldest first (the first is what the single-destination API acts on). */
  readonly destinationsBySource: ReadonlyMap<string, readonly DestinationSettings[]>;
  /**
   * The origins some enabled source allows, for CORS preflights, which name no source:
   * `any` when an enabled source allows every origin.
   */
  readonly corsOrigins: 'any' | ReadonlySet<string>;
}

/** The snapshot of an empty database, served before the first load. */
export const EMPTY_SNAPSHOT: SettingsSnapshot = buildSnapshot({
  sources: [],
  destinations: [],
  webhooks: [],
});

/** Indexes loaded rows into frozen plain objects; the rows themselves are not kept. */
export function buildSnapshot(rows: SettingsRows): SettingsSnapshot {
  const sources = new Map<string, SourceSettings>();
  const sourcesByWriteKey = new Map<string, SourceSettings>();
  for (const row of rows.sources) {
    const source: SourceSettings = Object.freeze({
      id: row.id,
      name: row.name,
      enabled: row.enabled,
      allowedOrigins: Object.freeze([...row.allowedOrigins]),
    });
    sources.set(source.id, source);
    sourcesByWriteKey.set(row.writeKey, source);
  }
  const webhooksByDestination = groupWebhooks(rows.webhooks);
  const destinations = new Map<string, DestinationSettings>();
  const destinationsBySource = new Map<string, DestinationSettings[]>();
  for (const row of [...rows.destinations].sort(oldestFirst)) {
    const destination = toDestination(row, webhooksByDestination.get(row.id) ?? []);
    destinations.set(destination.id, destination);
    const list = destinationsBySource.get(destination.sourceId) ?? [];
    list.push(destination);
    destinationsBySource.set(destination.sourceId, list);
  }
  for (const list of destinationsBySource.values()) Object.freeze(list);
  return Object.freeze({
    sources,
    sourcesByWriteKey,
    destinations,
    destinationsBySource,
    corsOrigins: corsOrigins(sources.values()),
  });
}

/** Every origin some enabled source allows, or `any` when one of them allows all. */
function corsOrigins(sources: Iterable<SourceSettings>): 'any' | ReadonlySet<string> {
  const origins = new Set<string>();
  for (const source of sources) {
    if (!source.enabled) continue;
    if (source.allowedOrigins.length === 0) return 'any';
    for (const origin of source.allowedOrigins) origins.add(origin);
  }
  return origins;
}

/** Groups webhooks by destination id, each group sorted by position and frozen. */
function groupWebhooks(rows: SettingsRows['webhooks']): Map<string, readonly WebhookSettings[]> {
  const groups = new Map<string, WebhookSettings[]>();
  for (const row of rows) {
    const webhook: WebhookSettings = Object.freeze({
      id: row.id,
      position: row.position,
      url: row.url,
      headers: Object.freeze({ ...row.headers }),
    });
    const group = groups.get(row.destinationId) ?? [];
    group.push(webhook);
    groups.set(row.destinationId, group);
  }
  const sorted = new Map<string, readonly WebhookSettings[]>();
  for (const [destinationId, group] of groups) {
    sorted.set(destinationId, Object.freeze(group.sort((a, b) => a.position - b.position)));
  }
  return sorted;
}

/** A filter that takes no call: what a stored filter that no longer validates becomes. */
const TAKES_NOTHING: CompiledFilter = Object.freeze({
  types: new Set<string>(),
  eventName: undefined,
  where: undefined,
});

/** Creation order, then id: the order of a source's destinations everywhere. */
function oldestFirst(
  a: SettingsRows['destinations'][number],
  b: SettingsRows['destinations'][number],
): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The stored filter compiled, once per settings change. */
function compiledFilter(filter: unknown): CompiledFilter | null {
  if (filter === null || filter === undefined) return null;
  const checked = validateFilter(filter);
  return checked.ok ? compileFilter(checked.filter) : TAKES_NOTHING;
}

/** One frozen destination; the ciphertext is copied so no buffer is shared with the driver. */
function toDestination(
  row: SettingsRows['destinations'][number],
  webhooks: readonly WebhookSettings[],
): DestinationSettings {
  const ciphertext = row.sharedSecretCiphertext;
  return Object.freeze({
    id: row.id,
    sourceId: row.sourceId,
    kind: row.kind,
    name: row.name,
    enabled: row.enabled,
    sharedSecretCiphertext: ciphertext ? Uint8Array.from(ciphertext) : null,
    webhooks,
    filter: compiledFilter(row.filter),
    rateLimitPerSecond: row.rateLimitPerSecond ?? null,
    signatureMode: row.signatureMode ?? DEFAULT_SIGNATURE_MODE,
    previousSecretCiphertext: row.previousSecretCiphertext
      ? Uint8Array.from(row.previousSecretCiphertext)
      : null,
    previousSecretExpiresAt: row.previousSecretExpiresAt?.getTime() ?? null,
    batching: batchingOf(row),
    ordering: orderingOf(row),
    sendTraceparent: row.sendTraceparent ?? false,
  });
}

/** The ordering bounds of a row; null when it delivers without ordering. */
function orderingOf(row: SettingsRows['destinations'][number]): OrderingSettings | null {
  const { orderingMaxPendingCalls, orderingMaxHoldSeconds } = row;
  if (orderingMaxPendingCalls === null || orderingMaxPendingCalls === undefined) return null;
  return { maxPendingCalls: orderingMaxPendingCalls, maxHoldSeconds: orderingMaxHoldSeconds! };
}

/** The batching bounds of a row; null when it sends one call a request. */
function batchingOf(row: SettingsRows['destinations'][number]): BatchSettings | null {
  const { batchMaxCalls, batchMaxBytes, batchMaxWaitMs } = row;
  if (batchMaxCalls === null || batchMaxCalls === undefined) return null;
  return Object.freeze({
    maxCalls: batchMaxCalls,
    maxBytes: batchMaxBytes ?? BATCH_LIMITS.maxBytes.default,
    maxWaitMs: batchMaxWaitMs ?? BATCH_LIMITS.maxWaitMs.default,
  });
}
