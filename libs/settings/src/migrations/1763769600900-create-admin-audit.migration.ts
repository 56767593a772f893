import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per change made through the admin API: the name of the token that made it (never
 * the token), the method, the route and the path asked, the id of the thing changed, and when.
 * No bodies: they may hold secrets. Read newest first, by id.
 */
const CREATE_ADMIN_AUDIT = `
  CREATE TABLE "admin_audit" (
    "id" bigserial PRIMARY KEY,
    "at" timestamptz NOT NULL DEFAULT now(),
    "token_name" text NOT NULL,
    "method" text NOT NULL,
    "route" text NOT NULL,
    "path" text NOT NULL,
    "resource_id" text
  )`;

/** Creates `admin_audit`. Frozen history: change it in a new migration. */
export class CreateAdminAudit1763769600900 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_ADMIN_AUDIT);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "admin_audit"`);
  }
}
