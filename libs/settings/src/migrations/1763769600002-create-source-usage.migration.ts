import type { MigrationInterface, QueryRunner } from 'typeorm';

const CREATE_SOURCE_USAGE = `
  CREATE TABLE "source_usage" (
    "source_id" uuid NOT NULL,
    "day" date NOT NULL,
    "calls" bigint NOT NULL DEFAULT 0,
    CONSTRAINT "source_usage_pkey" PRIMARY KEY ("source_id", "day"),
    CONSTRAINT "source_usage_source_id_fkey" FOREIGN KEY ("source_id")
      REFERENCES "source" ("id") ON DELETE CASCADE,
    CONSTRAINT "source_usage_calls_check" CHECK ("calls" >= 0)
  )`;

/**
 * Creates `source_usage`: calls accepted per source per UTC day, as counted by ingest. One
 * row per (source, day), added to in batches; never a row per call. Not a settings table, so
 * no NOTIFY trigger. Frozen history: change the schema in a new migration.
 */
export class CreateSourceUsage1763769600002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_SOURCE_USAGE);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "source_usage"`);
  }
}
