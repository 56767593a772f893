import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from 'pg';

import { createSettingsDataSource, runMigrations } from '@app/settings';
import { SecretBox } from '@app/signing';

import { DispatcherHarness } from '../../helpers/dispatcher-harness';
import { TEST_SECRETS_KEY } from '../../helpers/services';
import { createTestDatabase } from '../../helpers/test-database';
import { WebhookReceiver } from '../../helpers/webhook-receiver';

/** A settings database as release 0.1.0 left it (test/fixtures/release-db/README.md). */
const RELEASE_DUMP = join(__dirname, '../../fixtures/release-db/settings.sql');
/** What test/fixtures/release-db/make.sh stored through that release's admin API. */
const RELEASE = {
  writeKeyOf: "SELECT write_key FROM source WHERE name = 'release web'",
  secret: 'release-fixture-secret',
  header: ['x-release-fixture', 'kept'],
} as const;

/** The signature an implementation independent of the project computes: openssl's. */
function opensslHmacSha1(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', secret], { input: body });
  return out.toString().trim().split('= ').pop() ?? '';
}

async function runSql(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(sql);
    return Array.isArray(result) ? [] : (result.rows as Record<string, unknown>[]);
  } finally {
    await client.end();
  }
}

describe('upgrade: a database made by the previous release, opened by these apps', () => {
  const harness = new DispatcherHarness();
  let receiver: WebhookReceiver;
  let writeKey: string;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    const db = await createTestDatabase();
    harness.db = db;
    await runSql(db.url, readFileSync(RELEASE_DUMP, 'utf8'));
    // Only the URL moves, to this test's receiver: key, secret, header and ids stay as stored.
    await runSql(db.url, `UPDATE webhook SET url = '${receiver.url('/release')}'`);
    const dataSource = await createSettingsDataSource({ url: db.url, poolSize: 1 }).initialize();
    try {
      // As migrate.js does with SECRETS_ENCRYPTION_KEY set: the stored header gets encrypted.
      await runMigrations(dataSource, { headerCipher: new SecretBox(TEST_SECRETS_KEY) });
    } finally {
      await dataSource.destroy();
    }
    [{ write_key: writeKey }] = (await runSql(db.url, RELEASE.writeKeyOf)) as [
      { write_key: string },
    ];
    await harness.start();
  });

  afterAll(async () => {
    await receiver?.stop();
    await harness.close();
  });

  it('delivers a call under the stored write key, signed with the stored secret, with the stored header', async () => {
    const messageId = await harness.track(writeKey, randomUUID(), { properties: { total: 3 } });
    const [request] = await receiver.received(1);
    expect(request.path).toBe('/release');
    expect(JSON.parse(request.body.toString('utf8'))).toMatchObject({
      type: 'track',
      messageId,
      event: 'Order Completed',
      properties: { total: 3 },
    });
    expect(request.headers['x-signature']).toBe(opensslHmacSha1(RELEASE.secret, request.body));
    expect(request.headers[RELEASE.header[0]]).toBe(RELEASE.header[1]);
  });
});
