import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { MAX_DESTINATIONS_PER_SOURCE, MAX_WEBHOOKS_PER_DESTINATION } from '@app/contracts';
import { DestinationEntity, WebhookEntity } from '@app/settings';
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
import { MASKED_HEADER_VALUE, sealedHeaders } from './header-values';
import { DestinationView, destinationView, WebhookView, webhookView } from './destination.view';
import { DestinationsRepository, DestinationsTransaction } from './destinations.repository';

/** The source's first destination: its oldest, what the `/destination` routes act on. */
export const FIRST_DESTINATION = 'first';

/** Which destination of a source a request acts on: by id, or the source's first. */
export interface DestinationRef {
  readonly sourceId: string;
  readonly destinationId: string;
}

/**
 * The webhook destinations of a source (at most MAX_DESTINATIONS_PER_SOURCE) and their
 * webhook entries. A create holds the source's row lock, so the limit and unique names hold
 * under concurrent requests (the database refuses a 21st or a duplicate name anyway); every
 * other change runs in one transaction holding the destination's row lock, so its rules (at
 * most five webhooks, an enabled destination keeps at least one) hold too. A refused request
 * stores nothing. The SQL and the locks are `DestinationsRepository`'s.
 */
@Injectable()
export class DestinationsService {
  constructor(
    private readonly repository: DestinationsRepository,
    private readonly sources: SourcesService,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  /** A source's destinations, oldest first. */
  async list(sourceId: string): Promise<DestinationView[]> {
    await this.sources.find(sourceId);
    const rows = await this.repository.listOf(sourceId);
    return rows.map((row) => destinationView(row.destination, row.webhooks));
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
    let created: DestinationView | undefined;
    try {
      created = await this.repository.withSourceLocked(sourceId, async (tx) => {
        const names = await tx.namesOf(sourceId);
        if (onlyFirst && names.length > 0) {
          throw conflict(
            'destination_exists',
            'the source already has a webhook destination; add more with POST /admin/v1/sources/:id/destinations',
          );
        }
        if (names.length >= MAX_DESTINATIONS_PER_SOURCE) throw tooManyDestinations();
        if (names.includes(dto.name)) throw nameTaken(dto.name);
        const saved = await tx.insert({
          sourceId,
          name: dto.name,
          filter: filter ?? null,
          rateLimitPerSecond: dto.rateLimitPerSecond ?? null,
        });
        return destinationView(saved, []);
      });
    } catch (error) {
      throw destinationConflict(error, dto.name) ?? error;
    }
    if (!created) throw notFound('source');
    return created;
  }

  get(ref: DestinationRef): Promise<DestinationView> {
    return this.locked(ref, (_tx, d, hooks) => Promise.resolve(destinationView(d, hooks)));
  }

  /** Renames it, replaces its filter (null: takes every call) or its rate limit (null: none). */
  async update(ref: DestinationRef, dto: UpdateDestinationDto): Promise<DestinationView> {
    const filter = checkedFilter(dto.filter);
    try {
      return await this.locked(ref, async (tx, d, hooks) => {
        if (dto.name !== undefined && dto.name !== d.name) {
          if (await tx.nameTaken(d.sourceId, dto.name)) throw nameTaken(dto.name);
          d.name = dto.name;
        }
        if (filter !== undefined) d.filter = filter;
        if (dto.rateLimitPerSecond !== undefined) d.rateLimitPerSecond = dto.rateLimitPerSecond;
        return destinationView(await tx.save(d), hooks);
      });
    } catch (error) {
      throw destinationConflict(error, dto.name) ?? error;
    }
  }

  async remove(ref: DestinationRef): Promise<void> {
    await this.locked(ref, (tx, d) => tx.remove(d));
  }

  /** Stores the shared secret encrypted; it is never shown again. */
  setSecret(ref: DestinationRef, secret: string | null): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
      d.sharedSecretCiphertext = secret === null ? null : this.secrets.seal(secret);
      return destinationView(await tx.save(d), hooks);
    });
  }

  setEnabled(ref: DestinationRef, enabled: boolean): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
      if (enabled && hooks.length === 0) {
        throw conflict('no_webhooks', 'a destination needs at least one webhook to be enabled');
      }
      d.enabled = enabled;
      return destinationView(await tx.save(d), hooks);
    });
  }

  addWebhook(ref: DestinationRef, dto: WebhookDto): Promise<WebhookView> {
    return this.locked(ref, async (tx, d, hooks) => {
      if (hooks.length >= MAX_WEBHOOKS_PER_DESTINATION) {
        throw conflict(
          'too_many_webhooks',
          `a destination has at most ${MAX_WEBHOOKS_PER_DESTINATION} webhooks`,
        );
      }
      const hook = await tx.insertWebhook(d.id, {
        position: hooks.length,
        url: dto.url,
        headers: this.sealed(dto.headers ?? {}, {}, 'headers'),
      });
      return webhookView(hook);
    });
  }

  /** Edits an entry in place: it keeps its id (and so its place in a retry in progress). */
  updateWebhook(
    ref: DestinationRef,
    webhookId: string,
    dto: UpdateWebhookDto,
  ): Promise<WebhookView> {
    return this.locked(ref, async (tx, _d, hooks) => {
      const hook = findHook(hooks, webhookId);
      if (dto.url !== undefined) hook.url = dto.url;
      if (dto.headers !== undefined) {
        hook.headers = this.sealed(dto.headers, hook.headers, 'headers');
      }
      const [saved] = await tx.saveWebhooks([hook]);
      return webhookView(saved);
    });
  }

  removeWebhook(ref: DestinationRef, webhookId: string): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
      const hook = findHook(hooks, webhookId);
      if (d.enabled && hooks.length === 1) {
        throw conflict(
          'last_webhook',
          'the last webhook of an enabled destination cannot be removed',
        );
      }
      await tx.removeWebhooks([hook]);
      const rest = hooks.filter((h) => h !== hook);
      await renumber(tx, rest);
      return destinationView(d, rest);
    });
  }

  /** Replaces the list, in order; entries that carry an id keep it (edited in place). */
  replaceWebhooks(
    ref: DestinationRef,
    entries: readonly WebhookEntryDto[],
  ): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
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
      await tx.removeWebhooks(hooks.filter((h) => !kept.includes(h)));
      const next = entries.map((entry, position) => {
        const stored = kept[position]?.headers ?? {};
        const headers = this.sealed(entry.headers ?? {}, stored, `webhooks[${position}].headers`);
        const hook = kept[position] ?? tx.newWebhook(d.id);
        return Object.assign(hook, { position, url: entry.url, headers });
      });
      return destinationView(d, await tx.saveWebhooks(next));
    });
  }

  /**
   * Static header values to store, sealed like the shared secret; a masked value keeps the
   * stored one of its name (`header-values.ts`), and is a 400 when there is none.
   */
  private sealed(
    input: Readonly<Record<string, string>>,
    stored: Readonly<Record<string, string>>,
    field: string,
  ): Record<string, string> {
    const result = sealedHeaders(input, stored, (value) => this.secrets.sealText(value));
    if (result.ok) return result.headers;
    throw new BadRequestException({
      code: 'invalid_request',
      message: `${field}.${result.name}: ${JSON.stringify(MASKED_HEADER_VALUE)} keeps a stored value, and this webhook has no ${result.name} header; send the value`,
    });
  }

  /**
   * Runs `work` holding the destination's row lock, with the destination and its webhooks
   * loaded; 404 when the source or destination does not exist.
   */
  private async locked<T>(
    ref: DestinationRef,
    work: (tx: DestinationsTransaction, d: DestinationEntity, hooks: WebhookEntity[]) => Promise<T>,
  ): Promise<T> {
    const { sourceId, destinationId } = ref;
    if (!isUUID(sourceId)) throw notFound('source');
    const first = destinationId === FIRST_DESTINATION;
    if (!first && !isUUID(destinationId)) throw notFound('destination');
    const key = { sourceId, destinationId: first ? undefined : destinationId };
    const done = await this.repository.withDestinationLocked(key, async (tx, row) => ({
      value: await work(tx, row.destination, row.webhooks),
    }));
    if (done) return done.value;
    await this.sources.find(sourceId);
    throw notFound('destination');
  }
}

function findHook(hooks: readonly WebhookEntity[], webhookId: string): WebhookEntity {
  const hook = hooks.find((h) => h.id === webhookId);
  if (!hook) throw notFound('webhook');
  return hook;
}

/** Positions 0..n-1 in the current order, after a removal. */
async function renumber(
  tx: DestinationsTransaction,
  hooks: readonly WebhookEntity[],
): Promise<void> {
  const moved = hooks.filter((hook, position) => hook.position !== position);
  hooks.forEach((hook, position) => (hook.position = position));
  if (moved.length > 0) await tx.saveWebhooks(moved);
}
