import {
  createSettingsDataSource,
  DestinationEntity,
  runMigrations,
  SETTINGS_CHANNEL,
  SourceEntity,
  WebhookEntity,
} from '@app/settings';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

import {
  createTestDatabase,
  newWriteKey,
  type TestDatabase,
  waitFor,
} from '../../helpers/test-database';

describe('settings change notifications', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let listener: Client;
  const payloads: Record<string, string>[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(dataSource);
    listener = new Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel !== SETTINGS_CHANNEL) return;
      payloads.push(JSON.parse(message.payload ?? '{}') as Record<string, string>);
    });
    await listener.query(`LISTEN ${SETTINGS_CHANNEL}`);
  });

  afterAll(async () => {
    await listener?.end();
    await dataSource?.destroy();
    await database?.drop();
  });

  beforeEach(() => {
    payloads.length = 0;
  });

  /** Waits for the next `count` payloads and returns them. */
  async function next(count: number): Promise<Record<string, string>[]> {
    await waitFor(`${count} notification(s)`, () => payloads.length >= count);
    return payloads.splice(0, count);
  }

  it('announces each source change with the table, operation and ids', async () => {
    const sources = dataSource.getRepository(SourceEntity);
    const source = await sources.save({ name: 'Shop', writeKey: newWriteKey() });
    await sources.update({ id: source.id }, { enabled: false });
    await sources.delete({ id: source.id });
    const expected = ['INSERT', 'UPDATE', 'DELETE'].map((op) => ({
      table: 'source',
      op,
      id: source.id,
      source_id: source.id,
    }));
    await expect(next(3)).resolves.toEqual(expected);
  });

  it('names the parent ids of destinations and webhooks but never the secret', async () => {
    const source = await dataSource
      .getRepository(SourceEntity)
      .save({ name: 'Shop', writeKey: newWriteKey() });
    const destination = await dataSource.getRepository(DestinationEntity).save({
      sourceId: source.id,
      kind: 'webhooks',
      name: 'Hooks',
      sharedSecretCiphertext: Buffer.from('ciphertext-bytes'),
    });
    const webhook = await dataSource
      .getRepository(WebhookEntity)
      .save({ destinationId: destination.id, position: 0, url: 'https://hooks.test/' });
    const [, destinationPayload, webhookPayload] = await next(3);
    expect(destinationPayload).toEqual({
      table: 'destination',
      op: 'INSERT',
      id: destination.id,
      source_id: source.id,
    });
    expect(JSON.stringify(destinationPayload)).not.toContain('ciphertext');
    expect(webhookPayload).toEqual({
      table: 'webhook',
      op: 'INSERT',
      id: webhook.id,
      destination_id: destination.id,
    });
  });

  it('says nothing about a transaction that rolled back', async () => {
    await dataSource
      .transaction(async (manager) => {
        await manager.save(SourceEntity, { name: 'Ghost', writeKey: newWriteKey() });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const kept = await dataSource
      .getRepository(SourceEntity)
      .save({ name: 'Kept', writeKey: newWriteKey() });
    await expect(next(1)).resolves.toEqual([expect.objectContaining({ id: kept.id })]);
  });

  it('announces a truncate once per table', async () => {
    // The audience tables reference source too; having no trigger, they announce nothing.
    await dataSource.query(
      `TRUNCATE source, destination, webhook, source_usage,
        audience, audience_member, audience_sync, audience_sync_member`,
    );
    const truncates = await next(3);
    expect(truncates.map((payload) => payload.table).sort()).toEqual([
      'destination',
      'source',
      'webhook',
    ]);
    expect(truncates.every((payload) => payload.op === 'TRUNCATE' && !payload.id)).toBe(true);
  });
});
