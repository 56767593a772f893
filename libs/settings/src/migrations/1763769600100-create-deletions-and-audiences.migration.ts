import type { MigrationInterface, QueryRunner } from 'typeorm';

const CREATE_DELETION_REQUEST = `
  CREATE TABLE "deletion_request" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "user_count" integer NOT NULL,
    "source_ids" uuid[] NULL,
    "created_at" timestamptz NOT NULL,
    "published_at" timestamptz NULL,
    CONSTRAINT "deletion_request_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deletion_request_user_count_check" CHECK ("user_count" BETWEEN 1 AND 1000)
  )`;

const CREATE_DELETION_NOTIFICATION = `
  CREATE TABLE "deletion_notification" (
    "id" uuid NOT NULL,
    "request_id" uuid NOT NULL,
    "source_id" uuid NOT NULL,
    "destination_id" uuid NOT NULL,
    "user_id" text NOT NULL,
    "status" text NOT NULL DEFAULT 'pending',
    "reason" text NULL,
    "attempts" integer NULL,
    "outcome_at" timestamptz NULL,
    CONSTRAINT "deletion_notification_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deletion_notification_request_id_fkey" FOREIGN KEY ("request_id")
      REFERENCES "deletion_request" ("id") ON DELETE CASCADE,
    CONSTRAINT "deletion_notification_request_source_user_unique"
      UNIQUE ("request_id", "source_id", "user_id"),
    CONSTRAINT "deletion_notification_status_check"
      CHECK ("status" IN ('pending', 'delivered', 'failed'))
  )`;

const CREATE_AUDIENCE = `
  CREATE TABLE "audience" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "source_id" uuid NOT NULL,
    "kind" text NOT NULL,
    "name" text NOT NULL,
    "key" text NOT NULL,
    "member_count" integer NOT NULL DEFAULT 0,
    "last_synced_at" timestamptz NULL,
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "updated_at" timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT "audience_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "audience_source_id_fkey" FOREIGN KEY ("source_id")
      REFERENCES "source" ("id") ON DELETE CASCADE,
    CONSTRAINT "audience_source_key_unique" UNIQUE ("source_id", "key"),
    CONSTRAINT "audience_kind_check" CHECK ("kind" IN ('audience', 'computed_trait')),
    CONSTRAINT "audience_key_check" CHECK ("key" ~ '^[a-z0-9_]+$')
  )`;

const CREATE_AUDIENCE_MEMBER = `
  CREATE TABLE "audience_member" (
    "audience_id" uuid NOT NULL,
    "user_id" text NOT NULL,
    "value" jsonb NOT NULL,
    CONSTRAINT "audience_member_pkey" PRIMARY KEY ("audience_id", "user_id"),
    CONSTRAINT "audience_member_audience_id_fkey" FOREIGN KEY ("audience_id")
      REFERENCES "audience" ("id") ON DELETE CASCADE
  )`;

const CREATE_AUDIENCE_SYNC = `
  CREATE TABLE "audience_sync" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "audience_id" uuid NOT NULL,
    "status" text NOT NULL DEFAULT 'open',
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "committed_at" timestamptz NULL,
    "member_count" integer NULL,
    "joined_count" integer NULL,
    "left_count" integer NULL,
    "changed_count" integer NULL,
    CONSTRAINT "audience_sync_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "audience_sync_audience_id_fkey" FOREIGN KEY ("audience_id")
      REFERENCES "audience" ("id") ON DELETE CASCADE,
    CONSTRAINT "audience_sync_status_check" CHECK ("status" IN ('open', 'committed'))
  )`;

const CREATE_AUDIENCE_SYNC_MEMBER = `
  CREATE TABLE "audience_sync_member" (
    "sync_id" uuid NOT NULL,
    "user_id" text NOT NULL,
    "value" jsonb NOT NULL,
    CONSTRAINT "audience_sync_member_pkey" PRIMARY KEY ("sync_id", "user_id"),
    CONSTRAINT "audience_sync_member_sync_id_fkey" FOREIGN KEY ("sync_id")
      REFERENCES "audience_sync" ("id") ON DELETE CASCADE
  )`;

/**
 * Creates the tables of deletion requests (one row per notification, so receipts can be
 * recorded idempotently and counted per source and destination) and of audiences and
 * computed traits (`audience` with its `kind`, the membership of the last committed sync in
 * `audience_member`, and the pages of a sync in progress in `audience_sync_member`).
 *
 * None of them is a settings table the readers cache: no NOTIFY trigger, so a deletion or
 * a sync of 100,000 members never makes the settings caches reload. Frozen history: change
 * the schema in a new migration.
 */
export class CreateDeletionsAndAudiences1763769600100 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_DELETION_REQUEST);
    await queryRunner.query(CREATE_DELETION_NOTIFICATION);
    await queryRunner.query(CREATE_AUDIENCE);
    await queryRunner.query(CREATE_AUDIENCE_MEMBER);
    await queryRunner.query(CREATE_AUDIENCE_SYNC);
    await queryRunner.query(CREATE_AUDIENCE_SYNC_MEMBER);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "audience_sync_member"`);
    await queryRunner.query(`DROP TABLE "audience_sync"`);
    await queryRunner.query(`DROP TABLE "audience_member"`);
    await queryRunner.query(`DROP TABLE "audience"`);
    await queryRunner.query(`DROP TABLE "deletion_notification"`);
    await queryRunner.query(`DROP TABLE "deletion_request"`);
  }
}
