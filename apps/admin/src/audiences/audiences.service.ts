import { BadRequestException, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, EntityManager } from 'typeorm';

import { AudienceEntity, AudienceKind } from '@app/settings';

import { conflict, notFound, PG_UNIQUE_VIOLATION, sqlState } from '../admin.errors';
import { SourcesService } from '../sources/sources.service';
import { AudienceView, audienceView } from './audience.view';
import { traitKey } from './trait-key';

/**
 * Audiences and computed traits of a source (one table, told apart by `kind`). Trait keys
 * are unique per source across both kinds: they name the same user trait.
 */
@Injectable()
export class AudiencesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sources: SourcesService,
  ) {}

  async create(sourceId: string, kind: AudienceKind, name: string): Promise<AudienceView> {
    await this.sources.find(sourceId);
    const key = traitKey(name);
    if (key === '') {
      throw new BadRequestException({
        code: 'invalid_request',
        message:
          'name: must contain a Latin letter or a digit, from which its snake_case trait key is made (traitKey)',
      });
    }
    const repo = this.dataSource.getRepository(AudienceEntity);
    try {
      return audienceView(await repo.save(repo.create({ sourceId, kind, name, key })));
    } catch (error) {
      if (sqlState(error) === PG_UNIQUE_VIOLATION) {
        throw conflict(
          'trait_key_exists',
          `the source already has an audience or computed trait with the key ${key}`,
        );
      }
      throw error;
    }
  }

  async list(sourceId: string, kind: AudienceKind): Promise<AudienceView[]> {
    await this.sources.find(sourceId);
    const rows = await this.dataSource
      .getRepository(AudienceEntity)
      .find({ where: { sourceId, kind }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(audienceView);
  }

  async get(sourceId: string, kind: AudienceKind, id: string): Promise<AudienceView> {
    return audienceView(await this.find(this.dataSource.manager, sourceId, kind, id));
  }

  /** Deletes it with its members and syncs; the users' trait is left as last sent. */
  async remove(sourceId: string, kind: AudienceKind, id: string): Promise<void> {
    const audience = await this.find(this.dataSource.manager, sourceId, kind, id);
    await this.dataSource.getRepository(AudienceEntity).delete({ id: audience.id });
  }

  /**
   * The audience or computed trait, optionally locked for the transaction `m`; 404 when the
   * source or it does not exist.
   */
  async find(
    m: EntityManager,
    sourceId: string,
    kind: AudienceKind,
    id: string,
    lock = false,
  ): Promise<AudienceEntity> {
    const audience =
      isUUID(sourceId) && isUUID(id)
        ? await m.findOne(AudienceEntity, {
            where: { id, sourceId, kind },
            ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
          })
        : null;
    if (audience) return audience;
    await this.sources.find(sourceId);
    throw notFound(kind);
  }
}
