import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The id of a delivery's latest replay (null when never replayed), beside its `replays` count,
 * so that a replayed original can name the delivery that repeated it.
 *
 * Who a delivery was about: the call's `userId` and `anonymousId` (either may be null; rows
 * written before this have neither). Indexed for the search by user and by event name, each in
 * the list's order (newest first attempt first) so that a page is read off the index; partial,
 * so that rows without the value cost no index entry.
 */
const ADD_COLUMNS = `
  ALTER TABLE "delivery_ledger"
    ADD COLUMN "user_id" text,
    ADD COLUMN "anonymous_id" text,
    ADD COLUMN "last_replay_id" uuid`;

const CREATE_INDEXES = [
  `CREATE INDEX "delivery_ledger_user_id_idx"
     ON "delivery_ledger" ("user_id", "first_attempt_at" DESC, "id" DESC)
     WHERE "user_id" IS NOT NULL`,
  `CREATE INDEX "delivery_ledger_anonymous_id_idx"
     ON "delivery_ledger" ("anonymous_id", "first_attempt_at" DESC, "id" DESC)
     WHERE "anonymous_id" IS NOT NULL`,
  `CREATE INDEX "delivery_ledger_event_idx"
     ON "delivery_ledger" ("event", "first_attempt_at" DESC, "id" DESC)
     WHERE "event" IS NOT NULL`,
];

/** Adds the ledger's user and replay columns and its search indexes. Frozen history: change it in a new migration. */
export class AddLedgerSearchColumns1763769600800 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_COLUMNS);
    for (const sql of CREATE_INDEXES) await queryRunner.query(sql);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['event', 'anonymous_id', 'user_id']) {
      await queryRunner.query(`DROP INDEX "delivery_ledger_${name}_idx"`);
    }
    await queryRunner.query(
      `ALTER TABLE "delivery_ledger" DROP COLUMN "user_id", DROP COLUMN "anonymous_id",
         DROP COLUMN "last_replay_id"`,
    );
  }
}
