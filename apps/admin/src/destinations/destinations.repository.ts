import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';

import { DestinationEntity, SourceEntity, WebhookEntity } from '@app/settings';

/** How destinations are ordered everywhere: oldest first, ties by id. */
const OLDEST_FIRST = { createdAt: 'ASC', id: 'ASC' } as const;

/** A destination with its webhook entries. */
export interface DestinationRow {
  readonly destination: DestinationEntity;
  readonly webhooks: WebhookEntity[];
}

/** Which destination: by id, or (`undefined`) the source's oldest. */
export interface DestinationKey {
  readonly sourceId: string;
  readonly destinationId: string | undefined;
}

/** The fields a new destination is stored with. */
export type NewDestination = Pick<
  DestinationEntity,
  | 'sourceId'
  | 'name'
  | 'filter'
  | 'rateLimitPerSecond'
  | 'signatureMode'
  | 'batchMaxCalls'
  | 'batchMaxBytes'
  | 'batchMaxWaitMs'
  | 'orderingMaxPendingCalls'
  | 'orderingMaxHoldSeconds'
  | 'sendTraceparent'
>;

/** The fields of a webhook entry a request sets. */
export type WebhookFields = Pick<WebhookEntity, 'position' | 'url' | 'headers'>;

/**
 * The destinations' and webhooks' SQL. The locks live here (the source's row while a
 * destination is added, the destination's row while it or its webhooks change); the rules
 * that need them (limits, unique names, the last webhook) live in `DestinationsService` and
 * are tested against PostgreSQL in `test/medium/admin/`.
 */
@Injectable()
export class DestinationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A source's destinations, oldest first, each with its webhooks in position order. */
  async listOf(sourceId: string): Promise<DestinationRow[]> {
    const destinations = await this.dataSource
      .getRepository(DestinationEntity)
      .find({ where: { sourceId }, order: OLDEST_FIRST });
    const hooks = destinations.length
      ? await this.dataSource.getRepository(WebhookEntity).find({
          where: { destinationId: In(destinations.map((d) => d.id)) },
          order: { position: 'ASC' },
        })
      : [];
    return destinations.map((destination) => ({
      destination,
      webhooks: hooks.filter((h) => h.destinationId === destination.id),
    }));
  }

  /** The destination (by id, or the source's oldest), unlocked; null when none. */
  find(key: DestinationKey): Promise<DestinationEntity | null> {
    return this.dataSource.getRepository(DestinationEntity).findOne({
      where: whereOf(key),
      order: OLDEST_FIRST,
    });
  }

  /**
   * Runs `work` in a transaction holding the source's row lock, so that concurrent adds of
   * destinations to one source run one after the other; undefined when there is no source.
   */
  withSourceLocked<T>(
    sourceId: string,
    work: (tx: DestinationsTransaction) => Promise<T>,
  ): Promise<T | undefined> {
    return this.dataSource.transaction(async (m) => {
      const source = await m.findOne(SourceEntity, {
        where: { id: sourceId },
        lock: { mode: 'pessimistic_write' },
      });
      return source ? work(new DestinationsTransaction(m)) : undefined;
    });
  }

  /**
   * Runs `work` in a transaction holding the destination's row lock, with it and its
   * webhooks (position order) loaded; undefined when there is no such destination.
   */
  withDestinationLocked<T>(
    key: DestinationKey,
    work: (tx: DestinationsTransaction, row: DestinationRow) => Promise<T>,
  ): Promise<T | undefined> {
    return this.dataSource.transaction(async (m) => {
      const destination = await m.findOne(DestinationEntity, {
        where: whereOf(key),
        order: OLDEST_FIRST,
        lock: { mode: 'pessimistic_write' },
      });
      if (!destination) return undefined;
      const webhooks = await m.find(WebhookEntity, {
        where: { destinationId: destination.id },
        order: { position: 'ASC' },
      });
      return work(new DestinationsTransaction(m), { destination, webhooks });
    });
  }
}

/** Reads and writes inside one of {@link DestinationsRepository}'s locked transactions. */
export class DestinationsTransaction {
  constructor(private readonly m: EntityManager) {}

  /** The names of the source's destinations. */
  async namesOf(sourceId: string): Promise<string[]> {
    const rows = await this.m.find(DestinationEntity, {
      where: { sourceId },
      select: { name: true },
    });
    return rows.map((d) => d.name);
  }

  nameTaken(sourceId: string, name: string): Promise<boolean> {
    return this.m.exists(DestinationEntity, { where: { sourceId, name } });
  }

  /** Stores a new destination: webhooks kind, disabled, without a shared secret. */
  insert(fields: NewDestination): Promise<DestinationEntity> {
    return this.m.save(
      this.m.create(DestinationEntity, {
        ...fields,
        kind: 'webhooks',
        enabled: false,
        sharedSecretCiphertext: null,
      }),
    );
  }

  save(destination: DestinationEntity): Promise<DestinationEntity> {
    return this.m.save(destination);
  }

  /** Deletes it; its webhooks go with it (ON DELETE CASCADE). */
  async remove(destination: DestinationEntity): Promise<void> {
    await this.m.remove(destination);
  }

  insertWebhook(destinationId: string, fields: WebhookFields): Promise<WebhookEntity> {
    return this.m.save(this.m.create(WebhookEntity, { destinationId, ...fields }));
  }

  /** A webhook entry not stored yet, for {@link saveWebhooks}. */
  newWebhook(destinationId: string): WebhookEntity {
    return this.m.create(WebhookEntity, { destinationId });
  }

  /**
   * Saves entries, new and edited. The position constraint is deferred: a reorder is
   * checked at commit, as a whole.
   */
  saveWebhooks(webhooks: WebhookEntity[]): Promise<WebhookEntity[]> {
    return this.m.save(webhooks);
  }

  async removeWebhooks(webhooks: WebhookEntity[]): Promise<void> {
    if (webhooks.length > 0) await this.m.remove(webhooks);
  }
}

function whereOf({ sourceId, destinationId }: DestinationKey) {
  return destinationId === undefined ? { sourceId } : { sourceId, id: destinationId };
}
