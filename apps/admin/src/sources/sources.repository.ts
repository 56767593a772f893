import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';

import { readUsage, SourceEntity } from '@app/settings';

/** The fields a new source is stored with. */
export type NewSource = Pick<SourceEntity, 'name' | 'writeKey' | 'enabled' | 'allowedOrigins'>;

/**
 * The sources' SQL. Deleting a source deletes its destinations, webhooks, usage and
 * audiences (with their members and syncs) with it, by ON DELETE CASCADE; deletion requests
 * and their receipts stay (`test/medium/admin/`).
 */
@Injectable()
export class SourcesRepository {
  private readonly sources: Repository<SourceEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.sources = dataSource.getRepository(SourceEntity);
  }

  insert(fields: NewSource): Promise<SourceEntity> {
    return this.sources.save(this.sources.create(fields));
  }

  /** Every source, oldest first. */
  list(): Promise<SourceEntity[]> {
    return this.sources.find({ order: { createdAt: 'ASC' } });
  }

  findById(id: string): Promise<SourceEntity | null> {
    return this.sources.findOneBy({ id });
  }

  save(source: SourceEntity): Promise<SourceEntity> {
    return this.sources.save(source);
  }

  /** Deletes it with everything it owns; false when there was no such source. */
  async remove(id: string): Promise<boolean> {
    const result = await this.sources.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** Calls accepted per UTC day from `first` to `last` (`YYYY-MM-DD`, inclusive). */
  usage(id: string, first: string, last: string): Promise<{ day: string; calls: number }[]> {
    return readUsage(this.dataSource, id, first, last);
  }
}
