import { IsInt, Max, Min } from 'class-validator';

import { BaseEnv, CommonConfig, commonConfig, readEnv } from '@app/config';

/** The dispatcher app's variables: the shared ones plus its own. */
class DispatcherEnv extends BaseEnv {
  /** HTTP port of the dispatcher app (0 picks a free one). */
  @IsInt()
  @Min(0)
  @Max(65_535)
  DISPATCHER_PORT: number = 8083;
}

/** The dispatcher app's typed, frozen configuration. */
export type DispatcherConfig = CommonConfig;

/** Reads and validates the dispatcher app's configuration; the only reader of `process.env`. */
export function loadDispatcherConfig(env: NodeJS.ProcessEnv = process.env): DispatcherConfig {
  const vars = readEnv(DispatcherEnv, env);
  return commonConfig('dispatcher', vars, vars.DISPATCHER_PORT);
}
