import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per delivery (a call to one destination), partitioned by the day of its first
 * attempt: retention drops whole partitions, never rows. Partitions are created by the ledger
 * writer as days come (`delivery_ledger_YYYYMMDD`). No bodies: a dead letter's row points at
 * its dead-letter topic partition and offset. `history` holds each attempt's outcome.
 */
const CREATE_DELIVERY_LEDGER = `
  CREATE TABLE "delivery_ledger" (
    "id" uuid NOT NULL,
    "first_attempt_at" timestamptz NOT NULL,
    "source_id" text NOT NULL,
    "destination_id" text NOT NULL,
    "message_id" text NOT NULL,
    "call_type" text NOT NULL,
    "event" text,
    "state" text NOT NULL,
    "reason" text,
    "last_status" integer,
    "last_detail" text,
    "last_latency_ms" real,
    "attempts" integer NOT NULL,
    "next_attempt_at" timestamptz,
    "updated_at" timestamptz NOT NULL,
    "history" jsonb NOT NULL DEFAULT '[]',
    "dead_partition" integer,
    "dead_offset" bigint,
    "replay_of" uuid,
    "replays" integer NOT NULL DEFAULT 0,
    CONSTRAINT "delivery_ledger_pkey" PRIMARY KEY ("id", "first_attempt_at"),
    CONSTRAINT "delivery_ledger_state_check"
      CHECK ("state" IN ('delivered', 'retrying', 'dead', 'discarded'))
  ) PARTITION BY RANGE ("first_attempt_at")`;

const CREATE_INDEXES = [
  `CREATE INDEX "delivery_ledger_message_id_idx" ON "delivery_ledger" ("message_id")`,
  `CREATE INDEX "delivery_ledger_destination_idx"
     ON "delivery_ledger" ("destination_id", "first_attempt_at" DESC, "id" DESC)`,
];

/**
 * Replays of dead letters, one row per job: what it covers and how far it got. The admin
 * app runs the job; the row is its progress, readable after a restart.
 */
const CREATE_REPLAY_JOB = `
  CREATE TABLE "replay_job" (
    "id" uuid NOT NULL,
    "destination_id" uuid NOT NULL,
    "filter" jsonb NOT NULL,
    "status" text NOT NULL,
    "total" integer NOT NULL DEFAULT 0,
    "replayed" integer NOT NULL DEFAULT 0,
    "failed" integer NOT NULL DEFAULT 0,
    "error" text,
    "created_at" timestamptz NOT NULL DEFAULT now(),
    "finished_at" timestamptz,
    CONSTRAINT "replay_job_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "replay_job_status_check"
      CHECK ("status" IN ('running', 'finished', 'failed'))
  )`;

/** Creates the delivery ledger and the replay jobs. Frozen history: change it in a new migration. */
export class CreateDeliveryLedger1763769600200 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_DELIVERY_LEDGER);
    for (const sql of CREATE_INDEXES) await queryRunner.query(sql);
    await queryRunner.query(CREATE_REPLAY_JOB);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "replay_job"`);
    await queryRunner.query(`DROP TABLE "delivery_ledger"`);
  }
}
