import { NestFastifyApplication } from '@nestjs/platform-fastify';

import { loadAdminConfig } from '../../apps/admin/src/config';
import { startAdmin } from '../../apps/admin/src/main';
import { DeliveryOutcome, TOPIC } from '@app/contracts';

import { type AdminAnswer, callAdmin } from './admin-harness';
import { RouterHarness } from './router-harness';
import { serviceEnv, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from './services';

/** A source made through the admin API, with its webhook destination when asked for. */
export interface PipelineSource {
  readonly id: string;
  readonly writeKey: string;
  readonly destinationId?: string;
}

/** Options of {@link PipelineHarness.apiSource}. */
export interface PipelineSourceOptions {
  /** `none`: no destination; `disabled`: one with a webhook, not enabled. Default `enabled`. */
  readonly destination?: 'none' | 'disabled' | 'enabled';
  readonly webhookUrls?: readonly string[];
}

/**
 * Ingest, the router and the admin app on one fresh database and one topic prefix, with a
 * reader of the calls and deliveries topics and a producer (for outcome records the
 * dispatcher would publish).
 */
export class PipelineHarness extends RouterHarness {
  adminApp!: NestFastifyApplication;
  adminUrl!: string;

  override async start(env: Record<string, string> = {}): Promise<this> {
    await super.start(env);
    this.adminApp = await startAdmin(
      loadAdminConfig({
        KAFKA_BROKERS: serviceEnv().kafkaBrokers.join(','),
        DATABASE_URL: this.db.url,
        KAFKA_TOPIC_PREFIX: this.prefix,
        KAFKA_TOPIC_PARTITIONS: '2',
        HTTP_HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        LOG_LEVEL: 'error',
        ADMIN_TOKENS: TEST_ADMIN_TOKEN,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY,
        ...env,
      }),
    );
    this.adminUrl = await this.adminApp.getUrl();
    return this;
  }

  override async close(): Promise<void> {
    await this.adminApp?.close();
    await super.close();
  }

  /** Calls `/admin/v1<path>` with the test token (or `token`; null sends none). */
  api(
    method: string,
    path: string,
    body?: unknown,
    token: string | null = TEST_ADMIN_TOKEN,
  ): Promise<AdminAnswer> {
    return callAdmin(`${this.adminUrl}/admin/v1`, method, path, body, token);
  }

  /** Like {@link api}, failing unless the answer is 2xx; returns the body. */
  async apiOk(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await this.api(method, path, body);
    if (answer.status >= 300) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    }
    return answer.body;
  }

  /**
   * A source made through the admin API with a webhook destination (enabled by default),
   * once the router's settings cache has it.
   */
  async apiSource(options: PipelineSourceOptions = {}): Promise<PipelineSource> {
    const mode = options.destination ?? 'enabled';
    const source = await this.apiOk('POST', '/sources', { name: 'shop' });
    if (mode === 'none') return { id: source.id, writeKey: source.writeKey };
    const path = `/sources/${source.id}/destination`;
    const destination = await this.apiOk('POST', path, { name: 'hooks' });
    for (const url of options.webhookUrls ?? ['https://hooks.example.com/a']) {
      await this.apiOk('POST', `${path}/webhooks`, { url });
    }
    if (mode === 'enabled') await this.apiOk('POST', `${path}/enable`);
    await this.routerSees(
      'the destination',
      (d) => d?.id === destination.id && d?.enabled === (mode === 'enabled'),
      source.id,
    );
    return { id: source.id, writeKey: source.writeKey, destinationId: destination.id };
  }

  /** Publishes outcome records as the dispatcher does (keyed `destinationId:userKey`). */
  async publishOutcomes(
    outcomes: readonly (DeliveryOutcome | string)[],
    userKey = 'user',
  ): Promise<void> {
    await this.producer.send(
      outcomes.map((outcome) => ({
        topic: TOPIC.deliveryOutcomes,
        key: typeof outcome === 'string' ? 'x' : `${outcome.destinationId}:${userKey}`,
        value: typeof outcome === 'string' ? outcome : JSON.stringify(outcome),
      })),
    );
  }
}
