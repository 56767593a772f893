import { Client, type ClientConfig, type Notification } from 'pg';
import type { DataSourceOptions } from 'typeorm';

import { safeErrorMessage } from './database-url';
import { type ReconnectBackoff, reconnectDelayMs } from './reconnect-backoff';

/** The logger calls the settings lib makes; Nest's `Logger` satisfies it. */
export interface SettingsLogger {
  /** Routine events (reconnected). */
  log(message: string): void;
  /** Degraded operation (database unreachable, serving the last snapshot). */
  warn(message: string): void;
}

/** PostgreSQL connection options as TypeORM holds them. */
type PostgresOptions = Extract<DataSourceOptions, { type: 'postgres' }>;

/** `application_name` of the LISTEN connection, to find it in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'sluice-settings-listener';

/** What a `SettingsListener` needs. */
export interface SettingsListenerOptions {
  /** Where to connect; see `listenerClientConfig`. */
  readonly connection: ClientConfig;
  /** Channel to LISTEN on. */
  readonly channel: string;
  /** Called for every notification on the channel, with its payload. */
  readonly onNotification: (payload: string | undefined) => void;
  /** Called after a lost connection was re-established (changes may have been missed). */
  readonly onReconnect: () => void;
  /** Where warnings go. */
  readonly logger: SettingsLogger;
  /** Delays between reconnection attempts. */
  readonly backoff: ReconnectBackoff;
  /** Masked out of every logged message (the connection password). */
  readonly secrets: readonly (string | undefined)[];
  /** Randomness for the backoff jitter, in [0, 1). */
  readonly random: () => number;
}

/**
 * Builds the pg client configuration of the dedicated LISTEN connection from the settings
 * DataSource's options. TCP keep-alive lets a silently dead connection be noticed.
 */
export function listenerClientConfig(options: DataSourceOptions): ClientConfig {
  if (options.type !== 'postgres') throw new Error('the settings DataSource must be postgres');
  const postgres: PostgresOptions = options;
  return {
    connectionString: postgres.url,
    host: postgres.host,
    port: postgres.port,
    user: postgres.username,
    password: postgres.password,
    database: postgres.database,
    // TypeORM hands `ssl` to pg unchanged; its declared type is merely wider.
    ssl: postgres.ssl as ClientConfig['ssl'],
    connectionTimeoutMillis: postgres.connectTimeoutMS ?? 5_000,
    application_name: LISTENER_APPLICATION_NAME,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * Holds one pg connection that LISTENs on a channel, and re-opens it with backoff whenever
 * it is lost, until stopped. It does not reload anything itself: it reports notifications
 * and reconnections.
 */
export class SettingsListener {
  private client: Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private stopped = false;

  constructor(private readonly options: SettingsListenerOptions) {}

  /** Whether the LISTEN connection is currently open. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Opens the connection and LISTENs; rejects if that fails (no retry then). */
  async start(): Promise<void> {
    this.client = await this.connect();
  }

  /** Closes the connection and cancels any pending reconnection. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Connects a new client and LISTENs; the client is adopted by the caller. */
  private async connect(): Promise<Client> {
    const client = new Client(this.options.connection);
    client.on('error', (error) => this.connectionLost(client, error));
    client.on('end', () => this.connectionLost(client, new Error('connection ended')));
    client.on('notification', (message: Notification) => {
      if (message.channel === this.options.channel) this.options.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.options.channel)}`);
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** Reacts once to the loss of the adopted client; events of other clients are ignored. */
  private connectionLost(client: Client, error: Error): void {
    if (client !== this.client || this.stopped) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.options.logger.warn(`settings LISTEN connection lost, reconnecting: ${this.safe(error)}`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delayMs = reconnectDelayMs(this.attempt, this.options.backoff, this.options.random);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => void this.reconnect(), delayMs);
  }

  private async reconnect(): Promise<void> {
    this.retryTimer = undefined;
    if (this.stopped) return;
    try {
      const client = await this.connect();
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.options.logger.log(
        `settings LISTEN connection re-established after ${this.attempt} attempt(s)`,
      );
      this.attempt = 0;
      this.options.onReconnect();
    } catch (error) {
      if (this.stopped) return;
      this.options.logger.warn(`settings LISTEN reconnection failed: ${this.safe(error)}`);
      this.scheduleReconnect();
    }
  }

  private safe(error: unknown): string {
    return safeErrorMessage(error, this.options.secrets);
  }
}
