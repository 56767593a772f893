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
import { Apps, APPS, type AppsOptions, buildApps } from './apps.mts';
import { ChaosBroker, ChaosPostgres } from './services.mts';
import { Receiver } from './traffic.mts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Kafka jars: SLUICE_LOCAL_KAFKA_LIBS, or where docker/local/services.sh puts them. */
export function kafkaLibs(env: NodeJS.ProcessEnv): string {
  return env.SLUICE_LOCAL_KAFKA_LIBS ?? join(ROOT, '.local', 'kafka', 'libs');
}

/** The Kafka a stand's apps use: one broker, or a cluster. */
export interface StandKafka {
  readonly brokers: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** The PostgreSQL database a stand's apps use. */
export interface StandDatabase {
  readonly url: string;
  create(): Promise<void>;
  destroy(): Promise<void>;
}

/** A stand other than the default one (a broker and a PostgreSQL cluster of its own). */
export interface StandServices<K extends StandKafka, D extends StandDatabase> {
  readonly kafka: K;
  readonly database: D;
  /** Replicas of every app started at set-up (1 by default). */
  readonly replicas?: number;
  readonly apps?: AppsOptions;
}

export class Stand<K extends StandKafka = ChaosBroker, D extends StandDatabase = ChaosPostgres> {
  readonly supervisor = new Supervisor();
  readonly broker: K;
  readonly postgres: D;
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

  private readonly replicas: number;
  private readonly appsOptions: AppsOptions;

  /**
   * @param name names the topic prefix and the source (`chaos`, `pipeline`)
   * @param appEnv the apps' settings beyond what the stand needs
   * @param nodeArgs Node options for every app
   * @param services a Kafka and a database other than the stand's own (the cluster stand)
   */
  constructor(
    name: string,
    libs: string,
    appEnv: Record<string, string>,
    nodeArgs: readonly string[] = [],
    services?: StandServices<K, D>,
  ) {
    this.name = name;
    this.topicPrefix = `${name}.${Date.now()}.`;
    this.appEnv = appEnv;
    // Without services, K and D are their defaults (TypeScript cannot tie the two).
    this.broker = services?.kafka ?? (new ChaosBroker(ROOT, libs) as unknown as K);
    this.postgres = services?.database ?? (new ChaosPostgres() as unknown as D);
    this.replicas = services?.replicas ?? 1;
    this.appsOptions = {
      ...services?.apps,
      nodeArgs: [...nodeArgs, ...(services?.apps?.nodeArgs ?? [])],
    };
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
    progress(`starting Kafka and PostgreSQL of the ${this.name} run`);
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
      this.appsOptions,
    );
    apps.migrate();
    progress(`starting ingest, router, dispatcher and admin (${this.replicas} of each)`);
    for (const app of APPS) {
      for (let replica = 1; replica <= this.replicas; replica += 1) await apps.start(app, replica);
    }
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
