import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Validates a webhook's static headers: a JSON object with at most 5 keys whose values are
 * all strings. A CHECK constraint cannot hold a subquery, so the count lives in an IMMUTABLE
 * function; CASE makes sure `jsonb_each` only ever sees an object.
 */
const CREATE_HEADERS_FUNCTION = `
  CREATE FUNCTION "sluice_webhook_headers_valid"(headers jsonb) RETURNS boolean
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE
      WHEN jsonb_typeof(headers) <> 'object' THEN false
      ELSE (
        SELECT count(*) <= 5 AND coalesce(bool_and(jsonb_typeof(entry.value) = 'string'), true)
        FROM jsonb_each(headers) AS entry
      )
    END
  $$`;

const CREATE_SOURCE = `
  CREATE TABLE "source" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "name" text NOT NULL,
    "write_key" text NOT NULL,
    "enabled" boolean NOT NULL DEFAULT true,
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "updated_at" timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT "source_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "source_write_key_unique" UNIQUE ("write_key"),
    CONSTRAINT "source_write_key_length_check" CHECK (length("write_key") >= 32),
    CONSTRAINT "source_name_not_empty_check" CHECK (length(btrim("name")) > 0)
  )`;

const CREATE_DESTINATION = `
  CREATE TABLE "destination" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "source_id" uuid NOT NULL,
    "kind" text NOT NULL,
    "name" text NOT NULL,
    "enabled" boolean NOT NULL DEFAULT false,
    "shared_secret_ciphertext" bytea NULL,
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "updated_at" timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT "destination_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "destination_source_id_unique" UNIQUE ("source_id"),
    CONSTRAINT "destination_source_id_fkey" FOREIGN KEY ("source_id")
      REFERENCES "source" ("id") ON DELETE CASCADE,
    CONSTRAINT "destination_kind_check" CHECK ("kind" = 'webhooks'),
    CONSTRAINT "destination_name_not_empty_check" CHECK (length(btrim("name")) > 0),
    CONSTRAINT "destination_shared_secret_not_empty_check"
      CHECK (octet_length("shared_secret_ciphertext") > 0)
  )`;

const COMMENT_SHARED_SECRET = `
  COMMENT ON COLUMN "destination"."shared_secret_ciphertext" IS
    'Authenticated-cipher ciphertext of the shared secret, never plaintext'`;

const CREATE_WEBHOOK = `
  CREATE TABLE "webhook" (
    "id" uuid NOT NULL DEFAULT gen_random_uuid(),
    "destination_id" uuid NOT NULL,
    "position" smallint NOT NULL,
    "url" text NOT NULL,
    "headers" jsonb NOT NULL DEFAULT '{}',
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "updated_at" timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT "webhook_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_destination_id_fkey" FOREIGN KEY ("destination_id")
      REFERENCES "destination" ("id") ON DELETE CASCADE,
    CONSTRAINT "webhook_destination_position_unique" UNIQUE ("destination_id", "position")
      DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT "webhook_position_range_check" CHECK ("position" BETWEEN 0 AND 4),
    CONSTRAINT "webhook_url_scheme_check" CHECK ("url" ~ '^https?://'),
    CONSTRAINT "webhook_headers_check" CHECK (sluice_webhook_headers_valid("headers"))
  )`;

/**
 * Creates `source`, `destination` and `webhook` with every constraint named, so that errors
 * can be matched by name. Frozen history: change the schema in a new migration.
 */
export class CreateSettingsTables1763769600000 implements MigrationInterface {
  /** Creates the headers check function and the three tables. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_HEADERS_FUNCTION);
    await queryRunner.query(CREATE_SOURCE);
    await queryRunner.query(CREATE_DESTINATION);
    await queryRunner.query(COMMENT_SHARED_SECRET);
    await queryRunner.query(CREATE_WEBHOOK);
  }

  /** Drops the tables, children first, then the function. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhook"`);
    await queryRunner.query(`DROP TABLE "destination"`);
    await queryRunner.query(`DROP TABLE "source"`);
    await queryRunner.query(`DROP FUNCTION "sluice_webhook_headers_valid"(jsonb)`);
  }
}
