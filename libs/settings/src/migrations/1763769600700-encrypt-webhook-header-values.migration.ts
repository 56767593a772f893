import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Seals and opens static header values: the admin's and the dispatcher's `SecretBox` (AES-GCM
 * under SECRETS_ENCRYPTION_KEY, base64 text).
 */
export interface HeaderValueCipher {
  sealText(plaintext: string): string;
  openText(sealed: string): string;
}

/** Webhooks with at least one static header, locked for the rewrite. */
const WITH_HEADERS = `
  SELECT "id", "headers" FROM "webhook" WHERE "headers" <> '{}'::jsonb ORDER BY "id" FOR UPDATE`;

/** Replaces the headers of many webhooks in one statement. */
const SET_HEADERS = `
  UPDATE "webhook" w SET "headers" = v."headers"
    FROM unnest($1::uuid[], $2::jsonb[]) AS v("id", "headers")
   WHERE w."id" = v."id"`;

/**
 * Encrypts the static header values stored in plain text (the names stay readable: the API
 * shows them, and the checks on the column count them). From here on every value in
 * `webhook.headers` is sealed; the admin app seals what it stores and the dispatcher opens
 * the values when it reads the settings. Needs the key only when some webhook has headers:
 * `migrate.js` passes SECRETS_ENCRYPTION_KEY when it is set. `down` opens them again.
 */
export class EncryptWebhookHeaderValues1763769600700 implements MigrationInterface {
  /** Given by `runMigrations` / `revertAllMigrations` when the key is configured. */
  cipher?: HeaderValueCipher;

  async up(queryRunner: QueryRunner): Promise<void> {
    await rewriteValues(queryRunner, 'encrypt', this.cipher, (c, value) => c.sealText(value));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await rewriteValues(queryRunner, 'decrypt', this.cipher, (c, value) => c.openText(value));
  }
}

/** A webhook's id and its static headers as stored. */
interface StoredHeaders {
  readonly id: string;
  readonly headers: Record<string, string>;
}

async function rewriteValues(
  queryRunner: QueryRunner,
  verb: 'encrypt' | 'decrypt',
  cipher: HeaderValueCipher | undefined,
  rewrite: (cipher: HeaderValueCipher, value: string) => string,
): Promise<void> {
  const rows = (await queryRunner.query(WITH_HEADERS)) as StoredHeaders[];
  if (rows.length === 0) return;
  if (cipher === undefined) {
    throw new Error(
      `${rows.length} webhook(s) have static headers: set SECRETS_ENCRYPTION_KEY (the apps' key) ` +
        `for this migration to ${verb} their values`,
    );
  }
  const headers = rows.map((row) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(row.headers).map(([name, value]) => [name, rewrite(cipher, value)]),
      ),
    ),
  );
  await queryRunner.query(SET_HEADERS, [rows.map((row) => row.id), headers]);
}
