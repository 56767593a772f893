import { INestApplication, Logger, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

import { CommonConfig } from '@app/config';
import { JsonLogger } from '@app/observability';

import { ErrorOverrides, JsonErrorFilter } from './json-error.filter';
import { setV8Options } from './v8-options';

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** Largest request body Fastify accepts, in bytes (Fastify's default is 1 MiB). */
  readonly bodyLimitBytes?: number;
  /**
   * The logger; by default JSON lines labelled with the app's name. Apps sharing a process
   * share one logger, since Nest's class loggers write through the last one installed.
   */
  readonly logger?: LoggerService;
  /**
   * Proxies (addresses or CIDRs) whose `X-Forwarded-For` is believed for the client address;
   * none by default, so the socket's peer is the client.
   */
  readonly trustedProxies?: readonly string[];
  /** Framework errors answered with another status and code than their own. */
  readonly errorOverrides?: ErrorOverrides;
}

/**
 * Creates an app on the Fastify adapter with JSON logs and `{ code, message }` error
 * answers; the caller may connect microservices before {@link listen}.
 */
export async function createHttpApp(
  module: unknown,
  config: CommonConfig,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const trustProxy = options.trustedProxies?.length ? [...options.trustedProxies] : false;
  // No app uses Nest middleware: without middie, no request runs through its hook.
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimitBytes,
    trustProxy,
    skipMiddie: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: options.logger ?? new JsonLogger(config.app, config.logLevel),
    abortOnError: false,
  });
  app.useGlobalFilters(new JsonErrorFilter(options.errorOverrides));
  return app;
}

/**
 * Initializes the app (topics are created then), starts connected microservices, then the
 * HTTP server; returns the bound address.
 */
export async function listen(app: NestFastifyApplication, config: CommonConfig): Promise<string> {
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.http.port, config.http.host);
  const url = await app.getUrl();
  new Logger(config.app).log(`${config.app} listening on ${url}`);
  return url;
}

/**
 * Closes the apps, in the order given, on SIGTERM or SIGINT: consumers finish their
 * batches, commit and leave their groups, HTTP servers finish their requests, producers flush;
 * then the process exits 0. An uncaught exception or unhandled rejection is logged and closes
 * the apps the same way, then exits 1: consumers that leave their groups hand their partitions
 * over at once, where a crash would leave them waiting a session timeout. If closing takes
 * longer than `timeoutMs`, the process exits with status 1.
 */
export function closeOnSignal(apps: readonly INestApplication[], timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  let closing = false;
  const close = async (why: string, exitCode: number) => {
    if (closing) return;
    closing = true;
    logger.log(`${why}, closing`);
    setTimeout(() => {
      logger.error(`still closing after ${timeoutMs} ms, exiting`);
      process.exit(1);
    }, timeoutMs).unref();
    try {
      for (const app of apps) await app.close();
      process.exit(exitCode);
    } catch (error) {
      logger.error(`closing failed: ${describeError(error)}`);
      process.exit(1);
    }
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, (s) => void close(`${s} received`, 0));
  }
  const fatal = (kind: string) => (error: unknown) => {
    logger.fatal(
      `${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    void close(`${kind}`, 1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The log line of a start-up failure: the fields of every other line ({@link JsonLogger}'s
 * `app`, `level`, `pid`, `timestamp`), the error's message and no stack (a configuration error
 * names variables, never values).
 */
export function startupFailureLine(
  app: string,
  error: unknown,
  pid: number,
  nowMs: number,
): string {
  const message = `start-up failed: ${error instanceof Error ? error.message : String(error)}`;
  return JSON.stringify({ app, level: 'fatal', pid, timestamp: nowMs, message });
}

/** A handler that reports a start-up failure of `app` on stderr and exits with status 1. */
export function exitOnStartupError(app: string): (error: unknown) => never {
  return (error) => {
    process.stderr.write(`${startupFailureLine(app, error, process.pid, Date.now())}\n`);
    process.exit(1);
  };
}

/**
 * The body of an app's `main.ts` when run as a program: sets the V8 options
 * ({@link setV8Options}), reads the configuration, starts the app, and closes it on SIGTERM or
 * SIGINT; a start-up failure exits with status 1.
 */
export function runMain<C extends CommonConfig>(
  app: string,
  load: () => C,
  start: (config: C) => Promise<INestApplication>,
): void {
  setV8Options();
  (async () => {
    const config = load();
    closeOnSignal([await start(config)], config.shutdownTimeoutMs);
  })().catch(exitOnStartupError(app));
}
