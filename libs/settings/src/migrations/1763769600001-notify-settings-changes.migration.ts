import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables whose changes are announced; a reader's cache depends on all three. */
const NOTIFYING_TABLES = ['source', 'destination', 'webhook'] as const;

/**
 * Announces a change on the channel `sluice_settings` (a frozen copy of SETTINGS_CHANNEL:
 * migrations are history; the integration tests check that both agree). The payload names
 * the table, the operation, the row id and the parent ids it carries; it picks those keys
 * out of the row, so no other column (the shared secret above all) ever reaches it.
 * PostgreSQL delivers a NOTIFY when the transaction commits, and never after a rollback.
 */
const CREATE_NOTIFY_FUNCTION = `
  CREATE FUNCTION "sluice_settings_notify"() RETURNS trigger
  LANGUAGE plpgsql AS $$
  DECLARE
    affected jsonb;
  BEGIN
    IF TG_LEVEL = 'ROW' THEN
      affected := CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
    END IF;
    PERFORM pg_notify('sluice_settings', jsonb_strip_nulls(jsonb_build_object(
      'table', TG_TABLE_NAME,
      'op', TG_OP,
      'id', affected ->> 'id',
      'source_id', CASE WHEN TG_TABLE_NAME = 'source'
        THEN affected ->> 'id' ELSE affected ->> 'source_id' END,
      'destination_id', affected ->> 'destination_id'
    ))::text);
    RETURN NULL;
  END
  $$`;

/** Trigger name for a table, e.g. `source_settings_notify`. */
function triggerName(table: string): string {
  return `${table}_settings_notify`;
}

/**
 * Installs triggers that NOTIFY readers after every insert, update, delete (one message per
 * row) and truncate (one per statement) on the settings tables.
 */
export class NotifySettingsChanges1763769600001 implements MigrationInterface {
  /** Creates the notify function and its triggers. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(CREATE_NOTIFY_FUNCTION);
    for (const table of NOTIFYING_TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER "${triggerName(table)}" AFTER INSERT OR UPDATE OR DELETE ON "${table}"
         FOR EACH ROW EXECUTE FUNCTION "sluice_settings_notify"()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER "${triggerName(table)}_truncate" AFTER TRUNCATE ON "${table}"
         FOR EACH STATEMENT EXECUTE FUNCTION "sluice_settings_notify"()`,
      );
    }
  }

  /** Drops the triggers, then the function. */
  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of NOTIFYING_TABLES) {
      await queryRunner.query(`DROP TRIGGER "${triggerName(table)}_truncate" ON "${table}"`);
      await queryRunner.query(`DROP TRIGGER "${triggerName(table)}" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "sluice_settings_notify"()`);
  }
}
