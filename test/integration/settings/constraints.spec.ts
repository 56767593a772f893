import {
  createSettingsDataSource,
  DestinationEntity,
  runMigrations,
  SourceEntity,
  WebhookEntity,
} from '@app/settings';
import { type DataSource, QueryFailedError } from 'typeorm';

import { createTestDatabase, newWriteKey, type TestDatabase } from '../../helpers/test-database';

/** SQLSTATE of the violations asserted below. */
const UNIQUE_VIOLATION = '23505';
const CHECK_VIOLATION = '23514';

/** Asserts that PostgreSQL refused the statement with this SQLSTATE and constraint name. */
async function expectViolation(
  statement: Promise<unknown>,
  code: string,
  constraint: string,
): Promise<void> {
  const error: unknown = await statement.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(QueryFailedError);
  expect((error as QueryFailedError).driverError).toMatchObject({ code, constraint });
}

describe('settings constraints', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await createSettingsDataSource({ url: database.url, poolSize: 2 }).initialize();
    await runMigrations(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  function insertSource(writeKey = newWriteKey()): Promise<SourceEntity> {
    return dataSource.getRepository(SourceEntity).save({ name: 'Shop', writeKey });
  }

  function insertDestination(sourceId: string, name = 'Hooks'): Promise<DestinationEntity> {
    return dataSource.getRepository(DestinationEntity).save({ sourceId, kind: 'webhooks', name });
  }

  function insertWebhook(destinationId: string, position: number, headers = {}) {
    return dataSource
      .getRepository(WebhookEntity)
      .save({ destinationId, position, url: `https://hooks.test/${position}`, headers });
  }

  async function destinationWithWebhooks(count: number): Promise<DestinationEntity> {
    const destination = await insertDestination((await insertSource()).id);
    for (let position = 0; position < count; position += 1) {
      await insertWebhook(destination.id, position);
    }
    return destination;
  }

  it('fills ids, defaults and timestamps in PostgreSQL', async () => {
    const source = await insertSource();
    const destination = await insertDestination(source.id);
    expect(source).toMatchObject({ enabled: true, id: expect.any(String) as string });
    expect(source.createdAt).toBeInstanceOf(Date);
    expect(destination).toMatchObject({ enabled: false, sharedSecretCiphertext: null });
  });

  it('refuses a sixth webhook at position 5 (check)', async () => {
    const destination = await destinationWithWebhooks(5);
    await expectViolation(
      insertWebhook(destination.id, 5),
      CHECK_VIOLATION,
      'webhook_position_range_check',
    );
  });

  it('refuses a sixth webhook at a taken position (unique, checked at commit)', async () => {
    const destination = await destinationWithWebhooks(5);
    await expectViolation(
      insertWebhook(destination.id, 2),
      UNIQUE_VIOLATION,
      'webhook_destination_position_unique',
    );
    await expect(
      dataSource.getRepository(WebhookEntity).countBy({ destinationId: destination.id }),
    ).resolves.toBe(5);
  });

  it('lets only one of two concurrent transactions add a fifth webhook at position 4', async () => {
    const destination = await destinationWithWebhooks(4);
    const attempt = () =>
      dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO webhook (destination_id, position, url) VALUES ($1, 4, 'https://x.test/')`,
          [destination.id],
        );
      });
    const outcomes = await Promise.allSettled([attempt(), attempt()]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
    expect((rejected?.reason as QueryFailedError).driverError).toMatchObject({
      code: UNIQUE_VIOLATION,
      constraint: 'webhook_destination_position_unique',
    });
  });

  it('lets a list be reordered in one transaction', async () => {
    const destination = await destinationWithWebhooks(2);
    await dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE webhook SET position = 1 - position WHERE destination_id = $1`, [
        destination.id,
      ]);
    });
    const urls = await dataSource.getRepository(WebhookEntity).find({
      where: { destinationId: destination.id },
      order: { position: 'ASC' },
    });
    expect(urls.map((webhook) => webhook.url)).toEqual([
      'https://hooks.test/1',
      'https://hooks.test/0',
    ]);
  });

  it('refuses headers with six keys', async () => {
    const destination = await destinationWithWebhooks(0);
    const headers = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((k) => [`X-${k}`, k]));
    await expectViolation(
      insertWebhook(destination.id, 0, headers),
      CHECK_VIOLATION,
      'webhook_headers_check',
    );
  });

  it('accepts headers with five string values', async () => {
    const destination = await destinationWithWebhooks(0);
    const headers = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [`X-${k}`, k]));
    await expect(insertWebhook(destination.id, 0, headers)).resolves.toMatchObject({ headers });
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"x"'],
    ['a number value', '{"X-A": 1}'],
    ['a nested object', '{"X-A": {}}'],
  ])('refuses headers that are %s', async (_label, json) => {
    const destination = await destinationWithWebhooks(0);
    await expectViolation(
      dataSource.query(
        `INSERT INTO webhook (destination_id, position, url, headers) VALUES ($1, 0, 'http://a', $2)`,
        [destination.id, json],
      ),
      CHECK_VIOLATION,
      'webhook_headers_check',
    );
  });

  it('refuses a URL that is not http or https', async () => {
    const destination = await destinationWithWebhooks(0);
    await expectViolation(
      dataSource.getRepository(WebhookEntity).save({
        destinationId: destination.id,
        position: 0,
        url: 'ftp://hooks.test/',
      }),
      CHECK_VIOLATION,
      'webhook_url_scheme_check',
    );
  });

  it('refuses a second destination of the same name on one source', async () => {
    const source = await insertSource();
    await insertDestination(source.id);
    await expectViolation(
      insertDestination(source.id),
      UNIQUE_VIOLATION,
      'destination_source_name_unique',
    );
  });

  it('gives destinations the lowest free slot and refuses a 21st', async () => {
    const source = await insertSource();
    const made = [];
    for (let i = 0; i < 20; i += 1) made.push(await insertDestination(source.id, `D${i}`));
    const slots = await dataSource.query<{ slot: number }[]>(
      'SELECT slot FROM destination WHERE source_id = $1 ORDER BY slot',
      [source.id],
    );
    expect(slots.map((row) => row.slot)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await expectViolation(
      insertDestination(source.id, 'D20'),
      CHECK_VIOLATION,
      'destination_slot_range_check',
    );
    await dataSource.getRepository(DestinationEntity).delete({ id: made[3].id });
    const again = await insertDestination(source.id, 'D3 again');
    await expect(
      dataSource.getRepository(DestinationEntity).findOneByOrFail({ id: again.id }),
    ).resolves.toMatchObject({ slot: 3 });
  });

  it('never stores a 21st destination, even from concurrent inserts', async () => {
    const source = await insertSource();
    for (let i = 0; i < 18; i += 1) await insertDestination(source.id, `D${i}`);
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) => insertDestination(source.id, `C${i}`)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    await expect(
      dataSource.getRepository(DestinationEntity).countBy({ sourceId: source.id }),
    ).resolves.toBe(20);
  });

  it('refuses a filter that is not a JSON object', async () => {
    const source = await insertSource();
    await expectViolation(
      dataSource.query(
        `INSERT INTO destination (source_id, kind, name, filter) VALUES ($1, 'webhooks', 'x', '[]')`,
        [source.id],
      ),
      CHECK_VIOLATION,
      'destination_filter_object_check',
    );
  });

  it('refuses a destination kind other than webhooks', async () => {
    const source = await insertSource();
    await expectViolation(
      dataSource.query(
        `INSERT INTO destination (source_id, kind, name) VALUES ($1, 'email', 'x')`,
        [source.id],
      ),
      CHECK_VIOLATION,
      'destination_kind_check',
    );
  });

  it('refuses an empty shared secret ciphertext', async () => {
    const source = await insertSource();
    await expectViolation(
      dataSource.getRepository(DestinationEntity).save({
        sourceId: source.id,
        kind: 'webhooks',
        name: 'Hooks',
        sharedSecretCiphertext: Buffer.alloc(0),
      }),
      CHECK_VIOLATION,
      'destination_shared_secret_not_empty_check',
    );
  });

  it('refuses a write key shorter than 32 characters', async () => {
    await expectViolation(insertSource('short'), CHECK_VIOLATION, 'source_write_key_length_check');
  });

  it('refuses a write key used by another source', async () => {
    const writeKey = newWriteKey();
    await insertSource(writeKey);
    await expectViolation(insertSource(writeKey), UNIQUE_VIOLATION, 'source_write_key_unique');
  });

  it('refuses a blank source name', async () => {
    await expectViolation(
      dataSource.getRepository(SourceEntity).save({ name: '  ', writeKey: newWriteKey() }),
      CHECK_VIOLATION,
      'source_name_not_empty_check',
    );
  });

  it('deletes a source’s destination and webhooks with it', async () => {
    const destination = await destinationWithWebhooks(2);
    await dataSource.getRepository(SourceEntity).delete({ id: destination.sourceId });
    await expect(
      dataSource.getRepository(DestinationEntity).countBy({ id: destination.id }),
    ).resolves.toBe(0);
    await expect(
      dataSource.getRepository(WebhookEntity).countBy({ destinationId: destination.id }),
    ).resolves.toBe(0);
  });
});
