import { ConsoleLogger, LogLevel } from '@nestjs/common';

import { LOG_LEVELS, LogLevelName } from '@app/config';

/**
 * Nest's console logger writing one JSON object per line, with an `app` field so that the
 * four apps can share one process (local runs) and one log stream.
 */
export class JsonLogger extends ConsoleLogger {
  constructor(
    private readonly app: string,
    level: LogLevelName,
  ) {
    // structuredParams off: an object after the message stays its own entry, as the log format
    // has always been (the logger's default nests it under `params` since Nest 12).
    super({ json: true, colors: false, structuredParams: false, logLevels: levelsFrom(level) });
  }

  protected override getJsonLogObject(
    message: unknown,
    options: Parameters<ConsoleLogger['getJsonLogObject']>[1],
  ): ReturnType<ConsoleLogger['getJsonLogObject']> {
    const entry = { app: this.app, ...super.getJsonLogObject(message, options) };
    return entry;
  }
}

/** The levels at or above `level`. */
export function levelsFrom(level: LogLevelName): LogLevel[] {
  return LOG_LEVELS.slice(LOG_LEVELS.indexOf(level));
}
