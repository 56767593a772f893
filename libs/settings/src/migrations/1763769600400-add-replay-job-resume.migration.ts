import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What lets a bulk replay outlive the admin instance running it: `heartbeat_at`, renewed by
 * that instance while it runs the job (NULL once it let go of it), and `checkpoint`, where
 * the job stands after its last finished page (the last row's order key and the counts then).
 * A running job whose heartbeat is old or NULL is taken up again from its checkpoint.
 */
const ADD_RESUME_COLUMNS = `
  ALTER TABLE "replay_job"
    ADD COLUMN "heartbeat_at" timestamptz,
    ADD COLUMN "checkpoint" jsonb`;

/** Adds `replay_job.heartbeat_at` and `replay_job.checkpoint`. Frozen history: change it in a new migration. */
export class AddReplayJobResume1763769600400 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(ADD_RESUME_COLUMNS);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "replay_job" DROP COLUMN "checkpoint", DROP COLUMN "heartbeat_at"`,
    );
  }
}
