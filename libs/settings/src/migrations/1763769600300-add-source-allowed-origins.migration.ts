import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The browser origins a source's write key may be used from (CORS): serialized origins such
 * as `https://shop.example.com`, at most 50 (a frozen copy of MAX_ALLOWED_ORIGINS_PER_SOURCE);
 * empty allows every origin, as before this column existed. The admin API checks each one's
 * form; the source table's NOTIFY trigger already announces changes to it.
 */
const ADD_ALLOWED_ORIGINS = `
  ALTER TABLE "source"
    ADD COLUMN "allowed_origins" text[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT "source_allowed_origins_count_check"
      CHECK (cardinality("allowed_origins") <= 50)`;

/** Adds `source.allowed_origins`. Frozen history: change it in a new migration. */
export class AddSourceAllowedOrigins1763769600300 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_ALLOWED_ORIGINS);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "source" DROP CONSTRAINT "source_allowed_origins_count_check",
       DROP COLUMN "allowed_origins"`,
    );
  }
}
