/**
 * What the chaos suite and the pipeline benchmark run against: the four apps as separate
 * processes from a private build, a Kafka broker and a PostgreSQL cluster of their own, and a
 * signature-checking receiver on loopback, with a source whose enabled webhook destination
 * points at it. Everything it starts, `tearDown` stops and removes (safe after a failure).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { progress } from '../common.mts';
import { Supervisor } from '../processes.mts';
import { Apps, APPS, buildApps } from './apps.mts';
import { ChaosBroker, ChaosPostgres } from './services.mts';
import { Receiver } from './traffic.mts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Kafka jars: SLUICE_LOCAL_KAFKA_LIBS, or where docker/local/services.sh puts them. */
export function kafkaLibs(env: NodeJS.ProcessEnv): string {
  return env.SLUICE_LOCAL_KAFKA_LIBS ?? join(ROOT, '.local', 'kafka', 'libs');
}

export class Stand {
  readonly supervisor = new Supervisor();
  readonly broker: ChaosBroker;
  readonly postgres = new ChaosPostgres();
  readonly receiver: Receiver;
  /** The receiver's shared secret, which its source's destination signs with. */
  readonly secret = randomBytes(24).toString('hex');
  private readonly adminToken = `bench-${randomBytes(16).toString('hex')}`;
  private readonly encryptionKey = randomBytes(32).toString('base64');
  private readonly name: string;
  private readonly appEnv: Record<string, string>;
  /** The apps' KAFKA_TOPIC_PREFIX (and so their consumer groups'). */
  readonly topicPrefix: string;
  /** Where {@link setUp} built the apps. */
  buildDir?: string;
  private started?: Apps;

  private readonly nodeArgs: readonly string[];

  /**
   * @param name names the topic prefix and the source (`chaos`, `pipeline`)
   * @param appEnv the apps' settings beyond what the stand needs
   * @param nodeArgs Node options for every app
   */
  constructor(
    name: string,
    libs: string,
    appEnv: Record<string, string>,
    nodeArgs: readonly string[] = [],
  ) {
    this.name = name;
    this.topicPrefix = `${name}.${Date.now()}.`;
    this.appEnv = appEnv;
    this.nodeArgs = nodeArgs;
    this.broker = new ChaosBroker(ROOT, libs);
    this.receiver = new Receiver(this.secret);
  }

  get apps(): Apps {
    if (!this.started) throw new Error('the stand is not set up');
    return this.started;
  }

  /** Builds and starts everything; answers the write key of the receiver's source. */
  async setUp(): Promise<string> {
    progress('building the apps');
    this.buildDir = buildApps(ROOT);
    progress(`starting a broker and a PostgreSQL cluster of the ${this.name} run`);
    await Promise.all([this.broker.start(), this.postgres.create(), this.receiver.start()]);
    const prefix = this.topicPrefix;
    const apps = new Apps(
      this.buildDir,
      this.supervisor,
      () => ({
        KAFKA_BROKERS: this.broker.brokers,
        DATABASE_URL: this.postgres.url,
        KAFKA_TOPIC_PREFIX: prefix,
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ADMIN_TOKENS: this.adminToken,
        SECRETS_ENCRYPTION_KEY: this.encryptionKey,
        DISPATCHER_ALLOWED_CIDRS: '127.0.0.1/32',
        ...this.appEnv,
      }),
      this.nodeArgs,
    );
    apps.migrate();
    progress('starting ingest, router, dispatcher and admin');
    for (const app of APPS) await apps.start(app);
    this.started = apps;
    return this.source();
  }

  async tearDown(): Promise<void> {
    await this.supervisor.stopAll();
    await this.receiver.stop();
    await this.broker.destroy();
    await this.postgres.destroy();
    if (this.buildDir) rmSync(this.buildDir, { recursive: true, force: true });
  }

  killNow(): void {
    this.supervisor.killAllNow();
  }

  /** A source with an enabled, signed webhook destination pointing at the receiver. */
  private async source(): Promise<string> {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${this.apps.url('admin')}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.adminToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, string>) : {};
    };
    const source = await api('POST', '/sources', { name: this.name });
    const path = `/sources/${source.id}/destination`;
    await api('POST', path, { name: 'receiver' });
    await api('PUT', `${path}/shared-secret`, { sharedSecret: this.secret });
    await api('POST', `${path}/webhooks`, { url: this.receiver.url });
    await api('POST', `${path}/enable`);
    return source.writeKey;
  }
}
