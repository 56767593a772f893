import { BadRequestException, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { AudienceEntity, AudienceKind } from '@app/settings';

import { conflict, notFound, PG_UNIQUE_VIOLATION, sqlState } from '../admin.errors';
import { SourcesService } from '../sources/sources.service';
import { AudienceView, audienceView } from './audience.view';
import { AudiencesRepository, AudiencesTransaction } from './audiences.repository';
import { traitKey } from './trait-key';

/**
 * Audiences and computed traits of a source (one table, told apart by `kind`). Trait keys
 * are unique per source across both kinds: they name the same user trait.
 */
@Injectable()
export class AudiencesService {
  constructor(
    private readonly audiences: AudiencesRepository,
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
    try {
      return audienceView(await this.audiences.insert({ sourceId, kind, name, key }));
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
    return (await this.audiences.list(sourceId, kind)).map(audienceView);
  }

  async get(sourceId: string, kind: AudienceKind, id: string): Promise<AudienceView> {
    return audienceView(await this.find(this.audiences.direct, sourceId, kind, id));
  }

  /** Deletes it with its members and syncs; the users' trait is left as last sent. */
  async remove(sourceId: string, kind: AudienceKind, id: string): Promise<void> {
    const audience = await this.find(this.audiences.direct, sourceId, kind, id);
    await this.audiences.remove(audience.id);
  }

  /**
   * The audience or computed trait, optionally locked for the transaction `tx`; 404 when the
   * source or it does not exist.
   */
  async find(
    tx: AudiencesTransaction,
    sourceId: string,
    kind: AudienceKind,
    id: string,
    lock = false,
  ): Promise<AudienceEntity> {
    const audience =
      isUUID(sourceId) && isUUID(id) ? await tx.findAudience(sourceId, kind, id, lock) : null;
    if (audience) return audience;
    await this.sources.find(sourceId);
    throw notFound(kind);
  }
}
