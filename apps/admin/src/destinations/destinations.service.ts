import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, EntityManager } from 'typeorm';

import { MAX_WEBHOOKS_PER_DESTINATION } from '@app/contracts';
import { DestinationEntity, WebhookEntity } from '@app/settings';
import { SecretBox } from '@app/signing';

import { conflict, notFound, PG_UNIQUE_VIOLATION, sqlState } from '../admin.errors';
import { SourcesService } from '../sources/sources.service';
import {
  CreateDestinationDto,
  UpdateWebhookDto,
  WebhookDto,
  WebhookEntryDto,
} from './destination.dto';
import { DestinationView, destinationView, WebhookView, webhookView } from './destination.view';

/**
 * The webhook destination of a source (at most one) and its webhook entries. Every change
 * runs in one transaction holding the destination's row lock, so the rules (at most five
 * webhooks, an enabled destination keeps at least one) hold under concurrent requests; a
 * refused request stores nothing.
 */
@Injectable()
export class DestinationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sources: SourcesService,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  async create(sourceId: string, dto: CreateDestinationDto): Promise<DestinationView> {
    await this.sources.find(sourceId);
    const repo = this.dataSource.getRepository(DestinationEntity);
    try {
      const saved = await repo.save(
        repo.create({
          sourceId,
          kind: 'webhooks',
          name: dto.name,
          enabled: false,
          sharedSecretCiphertext: null,
        }),
      );
      return destinationView(saved, []);
    } catch (error) {
      if (sqlState(error) === PG_UNIQUE_VIOLATION) {
        throw conflict('destination_exists', 'the source already has a webhook destination');
      }
      throw error;
    }
  }

  get(sourceId: string): Promise<DestinationView> {
    return this.locked(sourceId, (_m, d, hooks) => Promise.resolve(destinationView(d, hooks)));
  }

  rename(sourceId: string, name: string): Promise<DestinationView> {
    return this.locked(sourceId, async (m, d, hooks) => {
      d.name = name;
      return destinationView(await m.save(d), hooks);
    });
  }

  async remove(sourceId: string): Promise<void> {
    await this.locked(sourceId, (m, d) => m.remove(d));
  }

  /** Stores the shared secret encrypted; it is never shown again. */
  setSecret(sourceId: string, secret: string | null): Promise<DestinationView> {
    return this.locked(sourceId, async (m, d, hooks) => {
      d.sharedSecretCiphertext = secret === null ? null : this.secrets.seal(secret);
      return destinationView(await m.save(d), hooks);
    });
  }

  setEnabled(sourceId: string, enabled: boolean): Promise<DestinationView> {
    return this.locked(sourceId, async (m, d, hooks) => {
      if (enabled && hooks.length === 0) {
        throw conflict('no_webhooks', 'a destination needs at least one webhook to be enabled');
      }
      d.enabled = enabled;
      return destinationView(await m.save(d), hooks);
    });
  }

  addWebhook(sourceId: string, dto: WebhookDto): Promise<WebhookView> {
    return this.locked(sourceId, async (m, d, hooks) => {
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
  updateWebhook(sourceId: string, webhookId: string, dto: UpdateWebhookDto): Promise<WebhookView> {
    return this.locked(sourceId, async (m, _d, hooks) => {
      const hook = findHook(hooks, webhookId);
      if (dto.url !== undefined) hook.url = dto.url;
      if (dto.headers !== undefined) hook.headers = dto.headers;
      return webhookView(await m.save(hook));
    });
  }

  removeWebhook(sourceId: string, webhookId: string): Promise<DestinationView> {
    return this.locked(sourceId, async (m, d, hooks) => {
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
  replaceWebhooks(sourceId: string, entries: readonly WebhookEntryDto[]): Promise<DestinationView> {
    return this.locked(sourceId, async (m, d, hooks) => {
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
   * Runs `work` in a transaction that holds the source's destination row lock, with the
   * destination and its webhooks loaded; 404 when the source or destination does not exist.
   */
  private async locked<T>(
    sourceId: string,
    work: (m: EntityManager, d: DestinationEntity, hooks: WebhookEntity[]) => Promise<T>,
  ): Promise<T> {
    if (!isUUID(sourceId)) throw notFound('source');
    return this.dataSource.transaction(async (m) => {
      const d = await m.findOne(DestinationEntity, {
        where: { sourceId },
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
