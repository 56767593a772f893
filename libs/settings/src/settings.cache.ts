import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

import { databaseUrlPassword, describeDatabaseUrl, safeErrorMessage } from './database-url';
import { DEFAULT_RECONNECT_BACKOFF, type ReconnectBackoff } from './reconnect-backoff';
import { ReloadCoalescer } from './reload-coalescer';
import { createSettingsDataSource, dataSourceUrl } from './settings.data-source';
import { SettingsUnavailableError } from './settings.errors';
import { listenerClientConfig, SettingsListener, type SettingsLogger } from './settings.listener';
import { loadSettingsRows } from './settings.loader';
import {
  buildSnapshot,
  type DestinationSettings,
  EMPTY_SNAPSHOT,
  type SettingsSnapshot,
  type SourceSettings,
} from './settings.snapshot';

/** PostgreSQL channel on which every settings change is announced (see the migrations). */
export const SETTINGS_CHANNEL = 'sluice_settings';

/** Pool size of the DataSource a cache creates for itself when given a URL. */
const OWN_POOL_SIZE = 2;

/** What a source without destinations has: one shared empty list. */
const NO_DESTINATIONS: readonly DestinationSettings[] = Object.freeze([]);

/** Why a reload ran. */
export type SettingsReloadReason = 'start' | 'notification' | 'reconnect' | 'timer' | 'manual';

/** Passed to `onReload` listeners after each successful reload. */
export interface SettingsReload {
  /** The new snapshot's version (1 for the first). */
  readonly version: number;
  /** When it was loaded, from the injected clock, in ms since the epoch. */
  readonly loadedAt: number;
  /** What prompted it. */
  readonly reason: SettingsReloadReason;
}

/** Counters for health and metrics. */
export interface SettingsCacheStats {
  /** Successful reloads so far, per reason. */
  readonly reloads: Readonly<Record<SettingsReloadReason, number>>;
  /** Reloads that failed (the previous snapshot was kept). */
  readonly failedReloads: number;
  /** Notifications received on the channel. */
  readonly notifications: number;
  /** Whether the LISTEN connection is open right now. */
  readonly listening: boolean;
}

/** Options of a `SettingsCache`. */
export interface SettingsCacheOptions {
  /** Period of the fallback full reload, in ms, in case a notification was missed. */
  readonly refreshIntervalMs: number;
  /** Clock, in ms since the epoch; defaults to `Date.now`. */
  readonly now?: () => number;
  /** Where warnings go; defaults to a Nest `Logger` named `SettingsCache`. */
  readonly logger?: SettingsLogger;
  /** Delays between LISTEN reconnection attempts; 250 ms doubling up to 30 s by default. */
  readonly reconnectBackoff?: ReconnectBackoff;
  /** Randomness for the backoff jitter, in [0, 1); defaults to `Math.random`. */
  readonly random?: () => number;
}

/**
 * The in-memory settings snapshot every reader uses (ingest for write keys, router,
 * dispatcher). Reloads in full on every NOTIFY on `SETTINGS_CHANNEL` (bursts coalesced: one
 * reload in flight, at most one queued) and every `refreshIntervalMs` as a fallback. While
 * PostgreSQL is unreachable it keeps serving the last snapshot and reconnects with backoff.
 * Lookups are synchronous and return frozen plain objects. Single use: start once, stop once.
 */
export class SettingsCache {
  private readonly dataSource: DataSource;
  private readonly ownsDataSource: boolean;
  private readonly logger: SettingsLogger;
  private readonly now: () => number;
  private readonly secrets: readonly (string | undefined)[];
  private readonly listener: SettingsListener;
  private readonly coalescer = new ReloadCoalescer<SettingsReloadReason>((reason) =>
    this.reloadSafely(reason),
  );
  private readonly listeners = new Set<(reload: SettingsReload) => void>();
  private readonly reloads = { start: 0, notification: 0, reconnect: 0, timer: 0, manual: 0 };
  private snapshot: SettingsSnapshot = EMPTY_SNAPSHOT;
  private currentVersion = 0;
  private currentLoadedAt: number | undefined;
  private failedReloads = 0;
  private notifications = 0;
  private lastFailure = 'not loaded yet';
  private timer: NodeJS.Timeout | undefined;
  private state: 'new' | 'started' | 'stopped' = 'new';

  /**
   * @param database an initialized DataSource shared with the app (not destroyed by `stop`),
   *   or a URL, for which the cache creates, initializes and destroys its own small pool.
   */
  constructor(
    database: DataSource | string,
    private readonly options: SettingsCacheOptions,
  ) {
    this.ownsDataSource = typeof database === 'string';
    this.dataSource =
      typeof database === 'string'
        ? createSettingsDataSource({ url: database, poolSize: OWN_POOL_SIZE })
        : database;
    this.logger = options.logger ?? new Logger(SettingsCache.name);
    this.now = options.now ?? Date.now;
    const url = dataSourceUrl(this.dataSource);
    this.secrets = [url ? databaseUrlPassword(url) : undefined];
    this.listener = this.createListener();
  }

  /** Version of the current snapshot: 0 before the first load, then +1 per reload. */
  get version(): number {
    return this.currentVersion;
  }

  /** When the current snapshot was loaded (ms since the epoch), undefined before the first. */
  get loadedAt(): number | undefined {
    return this.currentLoadedAt;
  }

  /** Counters for health and metrics. */
  get stats(): SettingsCacheStats {
    return {
      reloads: { ...this.reloads },
      failedReloads: this.failedReloads,
      notifications: this.notifications,
      listening: this.listener.listening,
    };
  }

  /**
   * LISTENs first, then loads the first snapshot (so no change can slip in between), then
   * arms the fallback timer. Rejects with `SettingsUnavailableError` if either step fails,
   * after releasing what it opened.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('SettingsCache can only be started once');
    this.state = 'started';
    try {
      if (this.ownsDataSource) await this.dataSource.initialize();
      await this.listener.start();
    } catch (error) {
      await this.stop();
      throw new SettingsUnavailableError(safeErrorMessage(error, this.secrets));
    }
    await this.coalescer.request('start');
    if (this.currentVersion === 0) {
      await this.stop();
      throw new SettingsUnavailableError(this.lastFailure);
    }
    this.timer = setInterval(
      () => void this.coalescer.request('timer'),
      this.options.refreshIntervalMs,
    );
    this.timer.unref();
  }

  /**
   * Stops the timer and the LISTEN connection, waits for a reload in flight, and closes the
   * cache's own pool if it made one. The last snapshot stays readable.
   */
  async stop(): Promise<void> {
    this.state = 'stopped';
    clearInterval(this.timer);
    this.timer = undefined;
    await this.listener.stop();
    await this.coalescer.idle();
    if (this.ownsDataSource && this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  /** Reloads now; resolves once a reload that began after this call has finished. */
  async refresh(): Promise<void> {
    await this.coalescer.request('manual');
  }

  /**
   * Calls `listener` after every successful reload; returns a function that unsubscribes.
   * A listener that throws is logged and does not affect the others.
   */
  onReload(listener: (reload: SettingsReload) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The source with this write key, enabled or not. A Map lookup hashes the key and compares
   * it only against a bucket's entries, so response time reveals nothing useful about how
   * much of a guessed key matched; there is no early-exit scan over all keys.
   */
  sourceByWriteKey(writeKey: string): SourceSettings | undefined {
    return this.snapshot.sourcesByWriteKey.get(writeKey);
  }

  /**
   * Whether a browser page of `origin` may use some enabled source's write key: what a CORS
   * preflight, which names no source, can know. Each request is checked against its own
   * source's list too.
   */
  originAllowedBySomeSource(origin: string): boolean {
    const allowed = this.snapshot.corsOrigins;
    return allowed === 'any' || allowed.has(origin);
  }

  /** The source with this id, enabled or not. */
  source(id: string): SourceSettings | undefined {
    return this.snapshot.sources.get(id);
  }

  /** The destination with this id, enabled or not, with its webhooks. */
  destination(id: string): DestinationSettings | undefined {
    return this.snapshot.destinations.get(id);
  }

  /** A source's destinations, oldest first, enabled or not, with their webhooks and filters. */
  destinationsForSource(sourceId: string): readonly DestinationSettings[] {
    return this.snapshot.destinationsBySource.get(sourceId) ?? NO_DESTINATIONS;
  }

  private createListener(): SettingsListener {
    return new SettingsListener({
      connection: listenerClientConfig(this.dataSource.options),
      channel: SETTINGS_CHANNEL,
      onNotification: () => {
        this.notifications += 1;
        void this.coalescer.request('notification');
      },
      onReconnect: () => void this.coalescer.request('reconnect'),
      logger: this.logger,
      backoff: this.options.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF,
      secrets: this.secrets,
      random: this.options.random ?? Math.random,
    });
  }

  /** One reload; a failure keeps the current snapshot and is logged, never thrown. */
  private async reloadSafely(reason: SettingsReloadReason): Promise<void> {
    if (this.state === 'stopped') return;
    try {
      const snapshot = buildSnapshot(await loadSettingsRows(this.dataSource));
      this.swap(snapshot, reason);
    } catch (error) {
      this.failedReloads += 1;
      this.lastFailure = safeErrorMessage(error, this.secrets);
      this.logger.warn(
        `settings reload (${reason}) from ${this.target()} failed, serving snapshot ` +
          `v${this.currentVersion}: ${this.lastFailure}`,
      );
    }
  }

  private swap(snapshot: SettingsSnapshot, reason: SettingsReloadReason): void {
    this.snapshot = snapshot;
    this.currentVersion += 1;
    this.currentLoadedAt = this.now();
    this.reloads[reason] += 1;
    const reload = { version: this.currentVersion, loadedAt: this.currentLoadedAt, reason };
    for (const listener of this.listeners) {
      try {
        listener(reload);
      } catch (error) {
        this.logger.warn(`settings onReload listener failed: ${safeErrorMessage(error, [])}`);
      }
    }
  }

  private target(): string {
    const url = dataSourceUrl(this.dataSource);
    return url ? describeDatabaseUrl(url) : 'the settings database';
  }
}
