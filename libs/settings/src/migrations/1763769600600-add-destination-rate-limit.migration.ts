import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination's rate limit, in deliveries a second across all dispatcher replicas: null (the
 * existing destinations' value) is unlimited, otherwise 1 to 10,000 (a frozen copy of
 * MAX_DESTINATION_RATE_LIMIT_PER_SECOND). The destination table's NOTIFY trigger already
 * announces changes to it.
 */
const ADD_RATE_LIMIT = `
  ALTER TABLE "destination"
    ADD COLUMN "rate_limit_per_second" integer,
    ADD CONSTRAINT "destination_rate_limit_range_check"
      CHECK ("rate_limit_per_second" BETWEEN 1 AND 10000)`;

/** Adds `destination.rate_limit_per_second`. Frozen history: change it in a new migration. */
export class AddDestinationRateLimit1763769600600 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_RATE_LIMIT);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "destination" DROP CONSTRAINT "destination_rate_limit_range_check",
       DROP COLUMN "rate_limit_per_second"`,
    );
  }
}
