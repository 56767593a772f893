import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether a destination's webhook POSTs carry the W3C `traceparent` of their span when the
 * dispatcher's traces are on; off for the existing destinations. The destination table's
 * NOTIFY trigger already announces changes to it.
 */
const ADD_SEND_TRACEPARENT = `
  ALTER TABLE "destination" ADD COLUMN "send_traceparent" boolean NOT NULL DEFAULT false`;

/** Adds `destination.send_traceparent`. Frozen history: change it in a new migration. */
export class AddDestinationSendTraceparent1763769601100 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_SEND_TRACEPARENT);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "destination" DROP COLUMN "send_traceparent"`);
  }
}
