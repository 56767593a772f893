import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination's batched delivery: most calls a request (1 to 4,000), most bytes of a
 * request's body (1 KiB to 16 MiB) and longest wait for a batch to fill (0 to 60,000 ms);
 * all three null (the existing destinations' value) sends one call a request. A frozen copy of
 * BATCH_LIMITS. The destination table's NOTIFY trigger already announces changes to them.
 */
const ADD_BATCHING = `
  ALTER TABLE "destination"
    ADD COLUMN "batch_max_calls" integer,
    ADD COLUMN "batch_max_bytes" integer,
    ADD COLUMN "batch_max_wait_ms" integer,
    ADD CONSTRAINT "destination_batching_check" CHECK (
      num_nulls("batch_max_calls", "batch_max_bytes", "batch_max_wait_ms") IN (0, 3)
      AND "batch_max_calls" BETWEEN 1 AND 4000
      AND "batch_max_bytes" BETWEEN 1024 AND 16777216
      AND "batch_max_wait_ms" BETWEEN 0 AND 60000)`;

/** Adds the `destination.batch_*` columns. Frozen history: change it in a new migration. */
export class AddDestinationBatching1763769601050 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_BATCHING);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "destination" DROP CONSTRAINT "destination_batching_check",
       DROP COLUMN "batch_max_calls", DROP COLUMN "batch_max_bytes",
       DROP COLUMN "batch_max_wait_ms"`,
    );
  }
}
