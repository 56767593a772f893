import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Several webhook destinations per source. The one-per-source constraint goes; each
 * destination takes a `slot` 0-19 unique within its source (assigned by a trigger) (so the database refuses a 21st
 * destination whatever the API does: 20 is a frozen copy of MAX_DESTINATIONS_PER_SOURCE), a
 * name unique within its source (names are keys of a call's `integrations` object), and an
 * optional `filter` (JSON, checked by the admin API). A source's existing destination takes
 * slot 0 and keeps its id, secret, webhooks and everything else; it stays the source's first
 * (oldest) destination. The (source_id, slot) index serves lookups by source as the dropped
 * one did.
 */
const UP = [
  `ALTER TABLE "destination" DROP CONSTRAINT "destination_source_id_unique"`,
  `ALTER TABLE "destination" ADD COLUMN "slot" smallint, ADD COLUMN "filter" jsonb`,
  `UPDATE "destination" SET "slot" = 0`,
  `ALTER TABLE "destination"
    ALTER COLUMN "slot" SET NOT NULL,
    ADD CONSTRAINT "destination_slot_range_check" CHECK ("slot" BETWEEN 0 AND 19),
    ADD CONSTRAINT "destination_source_slot_unique" UNIQUE ("source_id", "slot"),
    ADD CONSTRAINT "destination_source_name_unique" UNIQUE ("source_id", "name"),
    ADD CONSTRAINT "destination_filter_object_check"
      CHECK ("filter" IS NULL OR jsonb_typeof("filter") = 'object')`,
];

/**
 * A deletion request notifies each destination of a source: one notification row (and one
 * delete call, for that destination alone) per (request, source, destination, user).
 */
const NOTIFICATION_PER_DESTINATION = `
  ALTER TABLE "deletion_notification"
    DROP CONSTRAINT "deletion_notification_request_source_user_unique",
    ADD CONSTRAINT "deletion_notification_request_destination_user_unique"
      UNIQUE ("request_id", "source_id", "destination_id", "user_id")`;

/**
 * Gives a new destination the lowest free slot of its source when the insert names none (20,
 * refused by the range check, when all are taken). Two concurrent inserts may pick the same
 * slot: the unique constraint refuses the second, so a 21st can never be stored.
 */
const CREATE_ASSIGN_SLOT = [
  `CREATE FUNCTION "sluice_destination_assign_slot"() RETURNS trigger
   LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW."slot" IS NULL THEN
       SELECT coalesce(min(free.slot), 20) INTO NEW."slot"
       FROM generate_series(0, 19) AS free(slot)
       WHERE NOT EXISTS (
         SELECT 1 FROM "destination" d WHERE d."source_id" = NEW."source_id" AND d."slot" = free.slot
       );
     END IF;
     RETURN NEW;
   END
   $$`,
  `CREATE TRIGGER "destination_assign_slot" BEFORE INSERT ON "destination"
   FOR EACH ROW EXECUTE FUNCTION "sluice_destination_assign_slot"()`,
];

/** Refuses to revert while a source has more than one destination: reverting would lose some. */
const REFUSE_DOWN_WITH_SEVERAL = `
  DO $$
  BEGIN
    IF EXISTS (SELECT 1 FROM "destination" GROUP BY "source_id" HAVING count(*) > 1) THEN
      RAISE EXCEPTION 'a source has several destinations; delete all but one of each first';
    END IF;
  END
  $$`;

/** Many destinations per source, with slots, unique names and filters. Frozen history. */
export class ManyDestinationsPerSource1763769600500 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    for (const query of [...UP, ...CREATE_ASSIGN_SLOT, NOTIFICATION_PER_DESTINATION]) {
      await queryRunner.query(query);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(REFUSE_DOWN_WITH_SEVERAL);
    await queryRunner.query(
      `ALTER TABLE "deletion_notification"
        DROP CONSTRAINT "deletion_notification_request_destination_user_unique",
        ADD CONSTRAINT "deletion_notification_request_source_user_unique"
          UNIQUE ("request_id", "source_id", "user_id")`,
    );
    await queryRunner.query(`DROP TRIGGER "destination_assign_slot" ON "destination"`);
    await queryRunner.query(`DROP FUNCTION "sluice_destination_assign_slot"()`);
    await queryRunner.query(
      `ALTER TABLE "destination"
        DROP CONSTRAINT "destination_filter_object_check",
        DROP CONSTRAINT "destination_source_name_unique",
        DROP CONSTRAINT "destination_source_slot_unique",
        DROP CONSTRAINT "destination_slot_range_check",
        DROP COLUMN "filter",
        DROP COLUMN "slot",
        ADD CONSTRAINT "destination_source_id_unique" UNIQUE ("source_id")`,
    );
  }
}
