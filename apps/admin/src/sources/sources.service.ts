import { randomBytes } from 'node:crypto';

import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';

import { SourceEntity } from '@app/settings';

import { notFound } from '../admin.errors';
import { CreateSourceDto, UpdateSourceDto } from './source.dto';
import { SourcesRepository } from './sources.repository';

/** A source as the API shows it: never with its write key, except when one is made. */
export interface SourceView {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  /** Browser origins allowed to use the write key; empty allows every origin. */
  readonly allowedOrigins: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Days of usage shown when the query names none. */
const DEFAULT_USAGE_DAYS = 30;

/** Sources and their write keys. */
@Injectable()
export class SourcesService {
  constructor(private readonly sources: SourcesRepository) {}

  /** Creates an enabled source with a new write key, returned this once. */
  async create(dto: CreateSourceDto): Promise<SourceView & { writeKey: string }> {
    const writeKey = newWriteKey();
    const saved = await this.sources.insert({
      name: dto.name,
      writeKey,
      enabled: true,
      allowedOrigins: dto.allowedOrigins ?? [],
    });
    return { ...view(saved), writeKey };
  }

  async list(): Promise<SourceView[]> {
    return (await this.sources.list()).map(view);
  }

  async get(id: string): Promise<SourceView> {
    return view(await this.find(id));
  }

  async update(id: string, dto: UpdateSourceDto): Promise<SourceView> {
    const source = await this.find(id);
    if (dto.name !== undefined) source.name = dto.name;
    if (dto.enabled !== undefined) source.enabled = dto.enabled;
    if (dto.allowedOrigins !== undefined) source.allowedOrigins = dto.allowedOrigins;
    return view(await this.sources.save(source));
  }

  /** Replaces the write key; the old one stops working at once. */
  async rotateWriteKey(id: string): Promise<SourceView & { writeKey: string }> {
    const source = await this.find(id);
    source.writeKey = newWriteKey();
    const saved = await this.sources.save(source);
    return { ...view(saved), writeKey: saved.writeKey };
  }

  /** Deletes the source with its destination and webhooks. */
  async remove(id: string): Promise<void> {
    const removed = isUUID(id) && (await this.sources.remove(id));
    if (!removed) throw notFound('source');
  }

  /** Calls accepted per UTC day, as counted by ingest. */
  async usage(id: string, from?: string, to?: string): Promise<{ day: string; calls: number }[]> {
    await this.find(id);
    const last = to ?? new Date().toISOString().slice(0, 10);
    const first =
      from ??
      new Date(Date.parse(last) - (DEFAULT_USAGE_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    return this.sources.usage(id, first, last);
  }

  /** The source, or 404 (an id that is not a UUID cannot name one). */
  async find(id: string): Promise<SourceEntity> {
    const source = isUUID(id) ? await this.sources.findById(id) : null;
    if (!source) throw notFound('source');
    return source;
  }
}

function view(source: SourceEntity): SourceView {
  return {
    id: source.id,
    name: source.name,
    enabled: source.enabled,
    allowedOrigins: source.allowedOrigins,
    createdAt: source.createdAt.toISOString(),
    updatedAt: source.updatedAt.toISOString(),
  };
}

/** 32 random bytes, URL-safe: 43 characters, over the database's 32-character minimum. */
function newWriteKey(): string {
  return randomBytes(32).toString('base64url');
}
