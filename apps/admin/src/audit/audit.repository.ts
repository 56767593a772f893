import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { AuditEntry } from './audit-entry';

/** An audit entry as the API shows it. */
export interface AuditView extends AuditEntry {
  /** Increasing with each change; a page's `nextCursor` is the last one shown. */
  readonly id: string;
  readonly at: string;
}

interface AuditRow {
  readonly id: string;
  readonly at: Date;
  readonly token_name: string;
  readonly method: string;
  readonly route: string;
  readonly path: string;
  readonly resource_id: string | null;
}

/** The `admin_audit` table: appended to, read newest first. */
@Injectable()
export class AuditRepository {
  constructor(private readonly dataSource: DataSource) {}

  async append(entry: AuditEntry): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO "admin_audit" ("token_name", "method", "route", "path", "resource_id")
       VALUES ($1, $2, $3, $4, $5)`,
      [entry.tokenName, entry.method, entry.route, entry.path, entry.resourceId],
    );
  }

  /** Up to `limit` entries older than the one with id `before` (newest first without it). */
  async page(limit: number, before: string | undefined): Promise<AuditView[]> {
    const rows: AuditRow[] = await this.dataSource.query(
      `SELECT "id", "at", "token_name", "method", "route", "path", "resource_id"
       FROM "admin_audit" WHERE $1::bigint IS NULL OR "id" < $1::bigint
       ORDER BY "id" DESC LIMIT $2`,
      [before ?? null, limit],
    );
    return rows.map((row) => ({
      id: String(row.id),
      at: row.at.toISOString(),
      tokenName: row.token_name,
      method: row.method,
      route: row.route,
      path: row.path,
      resourceId: row.resource_id,
    }));
  }
}
