import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination's signature mode (`x-signature`, every existing destination's, or
 * `standard-webhooks`) and the previous secret of a rotation with the end of its overlap: both
 * set or both null. The destination table's NOTIFY trigger already announces changes to them.
 */
const ADD_SIGNING = `
  ALTER TABLE "destination"
    ADD COLUMN "signature_mode" text NOT NULL DEFAULT 'x-signature',
    ADD COLUMN "previous_secret_ciphertext" bytea,
    ADD COLUMN "previous_secret_expires_at" timestamptz,
    ADD CONSTRAINT "destination_signature_mode_check"
      CHECK ("signature_mode" IN ('x-signature', 'standard-webhooks')),
    ADD CONSTRAINT "destination_previous_secret_check"
      CHECK (("previous_secret_ciphertext" IS NULL) = ("previous_secret_expires_at" IS NULL))`;

/** Adds the destination's signing columns. Frozen history: change it in a new migration. */
export class AddDestinationSigning1763769601000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_SIGNING);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "destination" DROP CONSTRAINT "destination_previous_secret_check",
       DROP CONSTRAINT "destination_signature_mode_check",
       DROP COLUMN "previous_secret_expires_at",
       DROP COLUMN "previous_secret_ciphertext",
       DROP COLUMN "signature_mode"`,
    );
  }
}
