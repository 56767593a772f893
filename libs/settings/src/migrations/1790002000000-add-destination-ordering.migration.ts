import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination's ordered delivery: most calls of one user waiting behind its retrying call
 * (1 to 1,000) and longest that call holds them (1 to 3,600 s); both null (the existing
 * destinations' value) delivers without ordering. Ordering does not combine with batching. A
 * frozen copy of ORDERING_LIMITS. The destination table's NOTIFY trigger already announces
 * changes to them.
 */
const ADD_ORDERING = `
  ALTER TABLE "destination"
    ADD COLUMN "ordering_max_pending_calls" integer,
    ADD COLUMN "ordering_max_hold_seconds" integer,
    ADD CONSTRAINT "destination_ordering_check" CHECK (
      num_nulls("ordering_max_pending_calls", "ordering_max_hold_seconds") IN (0, 2)
      AND "ordering_max_pending_calls" BETWEEN 1 AND 1000
      AND "ordering_max_hold_seconds" BETWEEN 1 AND 3600
      AND ("ordering_max_pending_calls" IS NULL OR "batch_max_calls" IS NULL))`;

/** Adds the `destination.ordering_*` columns. Frozen history: change it in a new migration. */
export class AddDestinationOrdering1790002000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_ORDERING);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "destination" DROP CONSTRAINT "destination_ordering_check",
       DROP COLUMN "ordering_max_pending_calls", DROP COLUMN "ordering_max_hold_seconds"`,
    );
  }
}
