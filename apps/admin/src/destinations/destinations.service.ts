import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';

import {
  BATCH_LIMITS,
  DEFAULT_SIGNATURE_MODE,
  MAX_DESTINATIONS_PER_SOURCE,
  MAX_WEBHOOKS_PER_DESTINATION,
} from '@app/contracts';
import { DestinationEntity, WebhookEntity } from '@app/settings';
import { SecretBox } from '@app/signing';

import { conflict, notFound } from '../admin.errors';
import { Clock, CLOCK } from '../clock';
import { SourcesService } from '../sources/sources.service';
import {
  BatchingDto,
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
import { orderingColumns, orderingRefusal } from './ordering-rules';
import { modeRefusal, planRotation, refused, secretRefusal } from './secret-rules';

/** The source's first destination: its oldest, what the `/destination` routes act on. */
export const FIRST_DESTINATION = 'first';

/** Which destination of a source a request acts on: by id, or the source's first. */
export interface DestinationRef {
  readonly sourceId: string;
  readonly destinationId: string;
}

/** How secret rotations go, from the admin app's configuration. */
export interface SecretRotationOptions {
  /** How long a rotation keeps the previous secret signing when a request does not say. */
  readonly defaultOverlapSeconds: number;
}

/** Injection token of the {@link SecretRotationOptions}. */
export const SECRET_ROTATION_OPTIONS = Symbol('SECRET_ROTATION_OPTIONS');

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
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SECRET_ROTATION_OPTIONS) private readonly rotation: SecretRotationOptions,
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
        const fields = {
          sourceId,
          name: dto.name,
          filter: filter ?? null,
          rateLimitPerSecond: dto.rateLimitPerSecond ?? null,
          signatureMode: dto.signatureMode ?? DEFAULT_SIGNATURE_MODE,
          ...batchColumns(dto.batching),
          ...orderingColumns(dto.ordering),
          sendTraceparent: dto.sendTraceparent ?? false,
        };
        const refusal = orderingRefusal(fields);
        if (refusal) throw refusal;
        const saved = await tx.insert(fields);
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

  /**
   * Renames it, replaces its filter (null: takes every call), its rate limit (null: none), its
   * batching (null: one call a request) or its ordering (null: none).
   */
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
        if (dto.signatureMode !== undefined && dto.signatureMode !== d.signatureMode) {
          const refusal = modeRefusal(dto.signatureMode, this.openSecrets(d));
          if (refusal) throw refused(refusal);
          d.signatureMode = dto.signatureMode;
        }
        if (dto.batching !== undefined) Object.assign(d, batchColumns(dto.batching));
        if (dto.ordering !== undefined) Object.assign(d, orderingColumns(dto.ordering));
        const refusal = orderingRefusal(d);
        if (refusal) throw refusal;
        if (dto.sendTraceparent !== undefined) d.sendTraceparent = dto.sendTraceparent;
        return destinationView(await tx.save(d), hooks);
      });
    } catch (error) {
      throw destinationConflict(error, dto.name) ?? error;
    }
  }

  async remove(ref: DestinationRef): Promise<void> {
    await this.locked(ref, (tx, d) => tx.remove(d));
  }

  /**
   * Stores the shared secret encrypted (it is never shown again), or clears it; either ends a
   * rotation's overlap at once (the previous secret is dropped).
   */
  setSecret(ref: DestinationRef, secret: string | null): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
      const refusal = secret === null ? undefined : secretRefusal(d.signatureMode, secret);
      if (refusal) throw refused(refusal);
      d.sharedSecretCiphertext = secret === null ? null : this.secrets.seal(secret);
      d.previousSecretCiphertext = null;
      d.previousSecretExpiresAt = null;
      return destinationView(await tx.save(d), hooks);
    });
  }

  /**
   * Replaces the shared secret by `secret`, the replaced one signing beside it for the overlap
   * (a previous secret still in its overlap is dropped). Refused without a secret to rotate.
   */
  rotateSecret(
    ref: DestinationRef,
    secret: string,
    overlapSeconds = this.rotation.defaultOverlapSeconds,
  ): Promise<DestinationView> {
    return this.locked(ref, async (tx, d, hooks) => {
      const ciphertext = d.sharedSecretCiphertext;
      const current = ciphertext === null ? undefined : this.secrets.open(ciphertext);
      const mode = d.signatureMode;
      const nowMs = this.clock.now();
      const plan = planRotation({ mode, current, next: secret, overlapSeconds, nowMs });
      if (plan.kind === 'refused') throw refused(plan.refusal);
      const until = plan.previousExpiresAtMs;
      d.previousSecretCiphertext = until === null ? null : ciphertext;
      d.previousSecretExpiresAt = until === null ? null : new Date(until);
      d.sharedSecretCiphertext = this.secrets.seal(secret);
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

  /** The destination's secrets that sign: its own, and a previous one still in its overlap. */
  private openSecrets(d: DestinationEntity): string[] {
    const overlap = (d.previousSecretExpiresAt?.getTime() ?? 0) > this.clock.now();
    const sealed = [d.sharedSecretCiphertext, overlap ? d.previousSecretCiphertext : null];
    return sealed.flatMap((ciphertext) => (ciphertext ? [this.secrets.open(ciphertext)] : []));
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

/** The batching columns of a request's `batching`: all null, or each bound or its default. */
function batchColumns(
  batching: BatchingDto | null | undefined,
): Pick<DestinationEntity, 'batchMaxCalls' | 'batchMaxBytes' | 'batchMaxWaitMs'> {
  if (batching === null || batching === undefined) {
    return { batchMaxCalls: null, batchMaxBytes: null, batchMaxWaitMs: null };
  }
  return {
    batchMaxCalls: batching.maxCalls ?? BATCH_LIMITS.maxCalls.default,
    batchMaxBytes: batching.maxBytes ?? BATCH_LIMITS.maxBytes.default,
    batchMaxWaitMs: batching.maxWaitMs ?? BATCH_LIMITS.maxWaitMs.default,
  };
}
