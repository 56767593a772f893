import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, EntityManager, In } from 'typeorm';

import { MAX_DESTINATIONS_PER_SOURCE, MAX_WEBHOOKS_PER_DESTINATION } from '@app/contracts';
import { DestinationEntity, SourceEntity, WebhookEntity } from '@app/settings';
import { SecretBox } from '@app/signing';

import { conflict, notFound } from '../admin.errors';
import { SourcesService } from '../sources/sources.service';
import {
  CreateDestinationDto,
  UpdateDestinationDto,
  UpdateWebhookDto,
  WebhookDto,
  WebhookEntryDto,
} from './destination.dto';
import {
  checkedFilter,
  destinationConflict,
  nameTaken,
  tooManyDestinations,
} from './destination-rules';
import { DestinationView, destinationView, WebhookView, webhookView } from './destination.view';

/** The source's first destination: its oldest, what the `/destination` routes act on. */
export const FIRST_DESTINATION = 'first';

/** Which destination of a source a request acts on: by id, or the source's first. */
export interface DestinationRef {
  readonly sourceId: string;
  readonly destinationId: string;
}

/** How destinations are ordered everywhere: oldest first, ties by id. */
const OLDEST_FIRST = { createdAt: 'ASC', id: 'ASC' } as const;

/**
 * The webhook destinations of a source (at most MAX_DESTINATIONS_PER_SOURCE) and their
 * webhook entries. A create holds the source's row lock, so the limit and unique names hold
 * under concurrent requests (the database refuses a 21st or a duplicate name anyway); every
 * other change runs in one transaction holding the destination's row lock, so its rules (at
 * most five webhooks, an enabled destination keeps at least one) hold too. A refused request
 * stores nothing.
 */
@Injectable()
export class DestinationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sources: SourcesService,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  /** A source's destinations, oldest first. */
  async list(sourceId: string): Promise<DestinationView[]> {
    await this.sources.find(sourceId);
    const destinations = await this.dataSource.getRepository(DestinationEntity).find({
      where: { sourceId },
      order: OLDEST_FIRST,
    });
    const hooks = destinations.length
      ? await this.dataSource.getRepository(WebhookEntity).find({
          where: { destinationId: In(destinations.map((d) => d.id)) },
        })
      : [];
    return destinations.map((d) =>
      destinationView(
        d,
        hooks.filter((h) => h.destinationId === d.id),
      ),
    );
  }

  /**
   * Creates a destination, disabled. `onlyFirst` (the older `POST .../destination`) refuses
   * when the source has one already, as that route always did.
   */
  async create(
    sourceId: string,
    dto: CreateDestinationDto,
    onlyFirst = false,
  ): Promise<DestinationView> {
    const filter = checkedFilter(dto.filter);
    if (!isUUID(sourceId)) throw notFound('source');
    try {
      return await this.dataSource.transaction(async (m) => {
        const source = await m.findOne(SourceEntity, {
          where: { id: sourceId },
          lock: { mode: 'pessimistic_write' },
        });
        if (!source) throw notFound('source');
        const names = (await m.find(DestinationEntity, { where: { sourceId } })).map((d) => d.name);
        if (onlyFirst && names.length > 0) {
          throw conflict(
            'destination_exists',
            'the source already has a webhook destination; add more with POST /admin/v1/sources/:id/destinations',
          );
        }
        if (names.length >= MAX_DESTINATIONS_PER_SOURCE) throw tooManyDestinations();
        if (names.includes(dto.name)) throw nameTaken(dto.name);
        const saved = await m.save(
          m.create(DestinationEntity, {
            sourceId,
            kind: 'webhooks',
            name: dto.name,
            enabled: false,
            sharedSecretCiphertext: null,
            filter: filter ?? null,
            rateLimitPerSecond: dto.rateLimitPerSecond ?? null,
            sendTraceparent: dto.sendTraceparent ?? false,
          }),
        );
        return destinationView(saved, []);
      });
    } catch (error) {
      throw destinationConflict(error, dto.name) ?? error;
    }
  }

  get(ref: DestinationRef): Promise<DestinationView> {
    return this.locked(ref, (_m, d, hooks) => Promise.resolve(destinationView(d, hooks)));
  }

  /** Renames it, replaces its filter (null: takes every call) or its rate limit (null: none). */
  async update(ref: DestinationRef, dto: UpdateDestinationDto): Promise<DestinationView> {
    const filter = checkedFilter(dto.filter);
    try {
      return await this.locked(ref, async (m, d, hooks) => {
        if (dto.name !== undefined && dto.name !== d.name) {
          const taken = await m.exists(DestinationEntity, {
            where: { sourceId: d.sourceId, name: dto.name },
          });
          if (taken) throw nameTaken(dto.name);
          d.name = dto.name;
        }
        if (filter !== undefined) d.filter = filter;
        if (dto.rateLimitPerSecond !== undefined) d.rateLimitPerSecond = dto.rateLimitPerSecond;
        if (dto.sendTraceparent !== undefined) d.sendTraceparent = dto.sendTraceparent;
        return destinationView(await m.save(d), hooks);
      });
    } catch (error) {
      throw destinationConflict(error, dto.name) ?? error;
    }
  }

  async remove(ref: DestinationRef): Promise<void> {
    await this.locked(ref, (m, d) => m.remove(d));
  }

  /** Stores the shared secret encrypted; it is never shown again. */
  setSecret(ref: DestinationRef, secret: string | null): Promise<DestinationView> {
    return this.locked(ref, async (m, d, hooks) => {
      d.sharedSecretCiphertext = secret === null ? null : this.secrets.seal(secret);
      return destinationView(await m.save(d), hooks);
    });
  }

  setEnabled(ref: DestinationRef, enabled: boolean): Promise<DestinationView> {
    return this.locked(ref, async (m, d, hooks) => {
      if (enabled && hooks.length === 0) {
        throw conflict('no_webhooks', 'a destination needs at least one webhook to be enabled');
      }
      d.enabled = enabled;
      return destinationView(await m.save(d), hooks);
    });
  }

  addWebhook(ref: DestinationRef, dto: WebhookDto): Promise<WebhookView> {
    return this.locked(ref, async (m, d, hooks) => {
      if (hooks.length >= MAX_WEBHOOKS_PER_DESTINATION) {
        throw conflict(
          'too_many_webhooks',
          `a destination has at most ${MAX_WEBHOOKS_PER_DESTINATION} webhooks`,
        );
      }
      const hook = m.create(WebhookEntity, {
        destinationId: d.id,
        position: hooks.length,
        url: dto.url,
        headers: dto.headers ?? {},
      });
      return webhookView(await m.save(hook));
    });
  }

  /** Edits an entry in place: it keeps its id (and so its place in a retry in progress). */
  updateWebhook(
    ref: DestinationRef,
    webhookId: string,
    dto: UpdateWebhookDto,
  ): Promise<WebhookView> {
    return this.locked(ref, async (m, _d, hooks) => {
      const hook = findHook(hooks, webhookId);
      if (dto.url !== undefined) hook.url = dto.url;
      if (dto.headers !== undefined) hook.headers = dto.headers;
      return webhookView(await m.save(hook));
    });
  }

  removeWebhook(ref: DestinationRef, webhookId: string): Promise<DestinationView> {
    return this.locked(ref, async (m, d, hooks) => {
      const hook = findHook(hooks, webhookId);
      if (d.enabled && hooks.length === 1) {
        throw conflict(
          'last_webhook',
          'the last webhook of an enabled destination cannot be removed',
        );
      }
      await m.remove(hook);
      const rest = hooks.filter((h) => h !== hook);
      await renumber(m, rest);
      return destinationView(d, rest);
    });
  }

  /** Replaces the list, in order; entries that carry an id keep it (edited in place). */
  replaceWebhooks(
    ref: DestinationRef,
    entries: readonly WebhookEntryDto[],
  ): Promise<DestinationView> {
    return this.locked(ref, async (m, d, hooks) => {
      if (d.enabled && entries.length === 0) {
        throw conflict('last_webhook', 'an enabled destination keeps at least one webhook');
      }
      const ids = entries.flatMap((entry) => (entry.id === undefined ? [] : [entry.id]));
      if (new Set(ids).size !== ids.length) {
        throw new BadRequestException({
          code: 'invalid_request',
          message: 'webhooks: an id appears twice',
        });
      }
      const kept = entries.map((entry) =>
        entry.id === undefined ? undefined : findHook(hooks, entry.id),
      );
      const dropped = hooks.filter((h) => !kept.includes(h));
      if (dropped.length > 0) await m.remove(dropped);
      const next = entries.map((entry, position) => {
        const hook = kept[position] ?? m.create(WebhookEntity, { destinationId: d.id });
        return Object.assign(hook, { position, url: entry.url, headers: entry.headers ?? {} });
      });
      // The position constraint is deferred: a reorder is checked at commit, as a whole.
      const saved = await m.save(next);
      return destinationView(d, saved);
    });
  }

  /**
   * Runs `work` in a transaction that holds the destination's row lock, with the destination
   * and its webhooks loaded; 404 when the source or destination does not exist.
   */
  private async locked<T>(
    ref: DestinationRef,
    work: (m: EntityManager, d: DestinationEntity, hooks: WebhookEntity[]) => Promise<T>,
  ): Promise<T> {
    const { sourceId, destinationId } = ref;
    if (!isUUID(sourceId)) throw notFound('source');
    const first = destinationId === FIRST_DESTINATION;
    if (!first && !isUUID(destinationId)) throw notFound('destination');
    return this.dataSource.transaction(async (m) => {
      const d = await m.findOne(DestinationEntity, {
        where: first ? { sourceId } : { sourceId, id: destinationId },
        order: OLDEST_FIRST,
        lock: { mode: 'pessimistic_write' },
      });
      if (!d) {
        await this.sources.find(sourceId);
        throw notFound('destination');
      }
      const hooks = await m.find(WebhookEntity, {
        where: { destinationId: d.id },
        order: { position: 'ASC' },
      });
      return work(m, d, hooks);
    });
  }
}

function findHook(hooks: readonly WebhookEntity[], webhookId: string): WebhookEntity {
  const hook = hooks.find((h) => h.id === webhookId);
  if (!hook) throw notFound('webhook');
  return hook;
}

/** Positions 0..n-1 in the current order, after a removal. */
async function renumber(m: EntityManager, hooks: readonly WebhookEntity[]): Promise<void> {
  const moved = hooks.filter((hook, position) => hook.position !== position);
  hooks.forEach((hook, position) => (hook.position = position));
  if (moved.length > 0) await m.save(moved);
}
